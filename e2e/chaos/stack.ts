// A private `pnpm stack` system for the chaos suite: up/down through scripts/stack.mjs (own
// state dir, prefix and port offset), kills done here by pid (fast, counted), starts through
// `stack.mjs start --only NAME --no-build` (the launcher's own env and readiness check).
import { execFile } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { planEndpoints } from '../endpoints';
import type { HttpResult, ServiceKind, StackHandle, StackShape, Topology } from './scenario';

const run = promisify(execFile);
export const ROOT = join(__dirname, '../..');
/** The cell conductors' audit period in the chaos stack (default 5 min): a pass in every scenario, one after quiescence. */
export const AUDIT_INTERVAL_MS = 5000;
const ADMIN_URL = process.env.CELLSCHED_PG_ADMIN_URL ?? 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres';

/** Kills and starts, for the report. */
export interface StackEvent {
  at: number;
  what: 'kill' | 'start';
  service: string;
  signal?: string;
  pid?: number;
}

export class ChaosStack implements StackHandle {
  readonly stateDir: string;
  readonly events: StackEvent[] = [];
  /** Called after a service started again (the fault control re-applies its plan to a compute). */
  onStarted: (name: string) => Promise<void> = () => Promise.resolve();
  private readonly ports = new Map<string, number>();

  constructor(
    readonly prefix: string,
    readonly portOffset: number,
    readonly shape: StackShape,
    stateDir?: string,
  ) {
    // one fixed state dir per prefix and offset: a crashed run's processes are found (and stopped) by the next
    this.stateDir = stateDir ?? join(tmpdir(), `cellsched-chaos-${prefix}-${portOffset}`);
    mkdirSync(this.stateDir, { recursive: true });
  }

  get apiUrl(): string {
    return planEndpoints(this.portOffset).api;
  }
  get placementUrl(): string {
    return planEndpoints(this.portOffset).placement;
  }
  private get flags(): string[] {
    return ['--state-dir', this.stateDir, '--prefix', this.prefix, '--port-offset', String(this.portOffset)];
  }

  private async stackCmd(args: string[], timeoutMs: number): Promise<string> {
    try {
      const r = await run('node', ['scripts/stack.mjs', ...args, ...this.flags], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: timeoutMs,
        maxBuffer: 16 << 20,
        env: { ...process.env, CELLSCHED_AUDIT_INTERVAL_MS: String(AUDIT_INTERVAL_MS) },
      });
      return r.stdout;
    } catch (e) {
      const x = e as { stdout?: string; stderr?: string; message: string };
      throw new Error(`pnpm stack ${args.join(' ')} failed: ${x.message}\n${x.stdout ?? ''}${x.stderr ?? ''}`);
    }
  }

  /** Starts the whole system (building first); the previous run's logs and spans in the state dir go first. */
  async up(): Promise<void> {
    for (const f of readdirSync(this.stateDir))
      if (f.endsWith('.log') || /^spans(\..+)?\.jsonl$/.test(f)) rmSync(join(this.stateDir, f), { force: true });
    this.ports.clear();
    const s = this.shape;
    await this.stackCmd(
      [
        'up',
        '--cells',
        String(s.cells),
        '--hosts-per-cell',
        String(s.hostsPerCell),
        '--schedulers',
        String(s.schedulers),
        '--build-latency-ms',
        String(s.buildLatencyMs),
        '--build-failure-rate',
        '0',
      ],
      400_000,
    );
  }

  /** Stops everything and drops the system's databases and vhosts. */
  async down(): Promise<void> {
    await this.stackCmd(['down', '--purge'], 180_000);
  }

  topology(): Topology {
    return JSON.parse(readFileSync(join(this.stateDir, 'cells.json'), 'utf8')) as Topology;
  }

  services(): string[] {
    const cells = Array.from({ length: this.shape.cells }, (_, i) => `cell${i + 1}`);
    return [
      'placement',
      ...cells.map((c) => `cell-conductor-${c}`),
      ...cells.map((c) => `compute-${c}`),
      ...Array.from({ length: this.shape.schedulers }, (_, i) => `scheduler-${i}`),
      'super-conductor',
      'api',
    ];
  }

  servicesOf(kind: ServiceKind): string[] {
    return this.services().filter((n) => n === kind || n.startsWith(`${kind}-`));
  }

  private known(name: string): void {
    if (!this.services().includes(name)) throw new Error(`unknown service ${name}; known: ${this.services().join(', ')}`);
  }

  pid(name: string): number | undefined {
    const f = join(this.stateDir, `${name}.pid`);
    if (!existsSync(f)) return undefined;
    const pid = Number(readFileSync(f, 'utf8'));
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  isRunning(name: string): boolean {
    return this.pid(name) !== undefined;
  }

  logFile(name: string): string {
    return join(this.stateDir, `${name}.log`);
  }

  /** A kill of a process a scenario runs itself (an extra compute), counted like the stack's own. */
  recordKill(name: string, signal: NodeJS.Signals, pid?: number): void {
    this.events.push({ at: Date.now(), what: 'kill', service: name, signal, pid });
  }

  async kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.known(name);
    const pid = this.pid(name);
    if (pid === undefined) throw new Error(`kill ${name}: not running`);
    process.kill(pid, signal);
    this.events.push({ at: Date.now(), what: 'kill', service: name, signal, pid });
    const deadline = Date.now() + 15_000;
    while (this.pid(name) !== undefined) {
      if (Date.now() > deadline) throw new Error(`${name} (pid ${pid}) still running 15 s after ${signal}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    if (name.startsWith('compute-')) this.ports.delete(name.slice('compute-'.length));
  }

  async start(name: string): Promise<void> {
    this.known(name);
    const log = this.logFile(name);
    const from = existsSync(log) ? statSync(log).size : 0;
    await this.stackCmd(['start', '--only', name, '--no-build'], 120_000);
    this.events.push({ at: Date.now(), what: 'start', service: name, pid: this.pid(name) });
    if (name.startsWith('compute-')) {
      const cell = name.slice('compute-'.length);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const port = lastControlPort(log, from);
        if (port !== undefined) {
          this.ports.set(cell, port);
          break;
        }
        if (Date.now() > deadline) throw new Error(`${name} printed no controlPort after its start`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await this.onStarted(name);
  }

  /** The size of every service log now (where a scenario's part of each log begins). */
  logOffsets(): Map<string, number> {
    const m = new Map<string, number>();
    for (const n of this.services()) {
      const f = this.logFile(n);
      m.set(n, existsSync(f) ? statSync(f).size : 0);
    }
    return m;
  }

  /** The lines `name`'s log got since byte `from` (a restarted service appends to the same log). */
  logSince(name: string, from: number): string[] {
    const f = this.logFile(name);
    if (!existsSync(f)) return [];
    const size = statSync(f).size;
    if (size <= from) return [];
    const fd = openSync(f, 'r');
    try {
      const buf = Buffer.alloc(size - from);
      readSync(fd, buf, 0, buf.length, from);
      return buf.toString('utf8').split('\n');
    } finally {
      closeSync(fd);
    }
  }

  async restart(name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.isRunning(name)) await this.kill(name, signal);
    await this.start(name);
  }

  controlPort(cell: string): number {
    const cached = this.ports.get(cell);
    if (cached !== undefined) return cached;
    const port = lastControlPort(this.logFile(`compute-${cell}`), 0);
    if (port === undefined)
      throw new Error(`compute-${cell} has printed no controlPort (is it running with CELLSCHED_COMPUTE_CONTROL_PORT=0?)`);
    this.ports.set(cell, port);
    return port;
  }

  async api<T = unknown>(method: string, path: string, body?: unknown, token = 'admin'): Promise<HttpResult<T>> {
    const r = await fetch(`${this.apiUrl}${path}`, {
      method,
      signal: AbortSignal.timeout(30_000),
      headers: { 'x-auth-token': token, 'content-type': 'application/json', 'openstack-api-version': 'compute 2.62' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: parseBody(text) as T };
  }

  async placement<T = unknown>(method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
    const r = await fetch(`${this.placementUrl}${path}`, {
      method,
      signal: AbortSignal.timeout(30_000),
      headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'placement 1.39' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: parseBody(text) as T };
  }

  async query<T = Record<string, unknown>>(dbUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
    const c = new Client({ connectionString: dbUrl, connectionTimeoutMillis: 10_000 });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows as T[];
    } finally {
      await c.end();
    }
  }

  adminUrl(db = 'postgres'): string {
    const u = new URL(ADMIN_URL);
    u.pathname = `/${db}`;
    return u.toString();
  }
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The last `{"controlPort":N}` line the compute printed at or after byte `from` of its log. */
function lastControlPort(log: string, from: number): number | undefined {
  if (!existsSync(log)) return undefined;
  const size = statSync(log).size;
  if (size <= from) return undefined;
  const fd = openSync(log, 'r');
  try {
    const buf = Buffer.alloc(size - from);
    readSync(fd, buf, 0, buf.length, from);
    let port: number | undefined;
    for (const m of buf.toString('utf8').matchAll(/\{"controlPort":(\d+)\}/g)) port = Number(m[1]);
    return port;
  } finally {
    closeSync(fd);
  }
}
