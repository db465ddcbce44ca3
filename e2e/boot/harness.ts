import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

const ROOT = join(__dirname, '../..');

/** The cell topology the launcher wrote (URLs with each component's own dev credentials). */
export interface Topology {
  apiDbUrl: string;
  apiTransportUrl: string;
  cell0: { uuid: string; name: string; dbUrl: string };
  cells: { uuid: string; name: string; dbUrl: string; transportUrl: string }[];
}

/** A whole cellsched system started by `pnpm stack up` for one test file; `down()` stops and purges it. */
export class Stack {
  readonly stateDir = mkdtempSync(join(tmpdir(), 'cellsched-e2e-'));
  constructor(readonly prefix: string, readonly portOffset: number) {}

  get apiUrl(): string { return `http://127.0.0.1:${8774 + this.portOffset}/v2.1`; }
  get placementUrl(): string { return `http://127.0.0.1:${8778 + this.portOffset}`; }
  private get flags(): string[] { return ['--state-dir', this.stateDir, '--prefix', this.prefix, '--port-offset', String(this.portOffset)]; }

  /** Starts the system (builds first); the launcher's output is printed on failure. */
  up(extra: string[]): void {
    execFileSync('node', ['scripts/stack.mjs', 'up', ...this.flags, ...extra], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 });
  }

  down(): void {
    execFileSync('node', ['scripts/stack.mjs', 'down', '--purge', ...this.flags], { cwd: ROOT, stdio: 'ignore', timeout: 120_000 });
  }

  topology(): Topology { return JSON.parse(readFileSync(join(this.stateDir, 'cells.json'), 'utf8')) as Topology; }
  apiTransportUrl(): string { return this.topology().apiTransportUrl; }
  spansFile(): string { return join(this.stateDir, 'spans.jsonl'); }

  /** `cellsched-manage` against this system's API DB. */
  manage(args: string[]): string {
    return execFileSync('node', ['services/manage/dist/main.js', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CELLSCHED_API_DB_URL: this.topology().apiDbUrl } });
  }

  async query<T>(dbUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
    const c = new Client({ connectionString: dbUrl });
    await c.connect();
    try { return (await c.query(sql, params)).rows as T[]; } finally { await c.end(); }
  }

  async api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const r = await fetch(`${this.apiUrl}${path}`, {
      method, headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'compute 2.62' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  async placement<T>(path: string): Promise<T> {
    const r = await fetch(`${this.placementUrl}${path}`, { headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' } });
    if (r.status !== 200) throw new Error(`placement GET ${path}: ${r.status}`);
    return (await r.json()) as T;
  }

  /** Every consumer's allocations, by consumer uuid: provider name → resources. */
  async allocationsByConsumer(): Promise<Map<string, Map<string, Record<string, number>>>> {
    const { resource_providers: rps } = await this.placement<{ resource_providers: { uuid: string; name: string }[] }>('/resource_providers');
    const out = new Map<string, Map<string, Record<string, number>>>();
    for (const rp of rps) {
      const { allocations } = await this.placement<{ allocations: Record<string, { resources: Record<string, number> }> }>(`/resource_providers/${rp.uuid}/allocations`);
      for (const [consumer, a] of Object.entries(allocations)) {
        const m = out.get(consumer) ?? new Map<string, Record<string, number>>();
        m.set(rp.name, a.resources);
        out.set(consumer, m);
      }
    }
    return out;
  }
}

export const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
