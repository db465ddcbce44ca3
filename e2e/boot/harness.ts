import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { planEndpoints } from '../endpoints';

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
  /** The service options `up` gave every process (a restarted service gets them again). */
  private env: Record<string, string> = {};
  constructor(
    readonly prefix: string,
    readonly portOffset: number,
  ) {}

  get apiUrl(): string {
    return planEndpoints(this.portOffset).api;
  }
  get placementUrl(): string {
    return planEndpoints(this.portOffset).placement;
  }
  private get flags(): string[] {
    return ['--state-dir', this.stateDir, '--prefix', this.prefix, '--port-offset', String(this.portOffset)];
  }

  /** Starts the system (builds first); the launcher's output is printed on failure. `env`: service options every process gets. */
  up(extra: string[], env: Record<string, string> = {}): void {
    this.env = env;
    execFileSync('node', ['scripts/stack.mjs', 'up', ...this.flags, ...extra], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 300_000,
      env: { ...process.env, ...env },
    });
  }

  /** `stack.mjs <command> --only <services> [extra]` on this system (`kill`, `start`: no bootstrap, no discovery); `env` reaches the started services. */
  launcher(command: 'kill' | 'start', only: string, extra: string[] = [], env: Record<string, string> = {}): void {
    execFileSync('node', ['scripts/stack.mjs', command, '--only', only, ...this.flags, ...extra], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 300_000,
      env: { ...process.env, ...env },
    });
  }

  /** The real OpenStack client against this system's compute API (admin token); resolves its exit code and output. */
  openstack(args: string[]): { code: number; out: string } {
    const auth = ['--os-auth-type', 'admin_token', '--os-token', 'admin', '--os-endpoint', this.apiUrl];
    try {
      return {
        code: 0,
        out: execFileSync('openstack', [...auth, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 }),
      };
    } catch (e) {
      const err = e as { status?: number; stdout?: string; stderr?: string };
      return { code: err.status ?? 1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
    }
  }

  down(): void {
    execFileSync('node', ['scripts/stack.mjs', 'down', '--purge', ...this.flags], { cwd: ROOT, stdio: 'ignore', timeout: 120_000 });
  }

  /** Stops every process of the system and keeps its data (`pnpm stack down` without --purge). */
  stop(): void {
    execFileSync('node', ['scripts/stack.mjs', 'down', ...this.flags], { cwd: ROOT, stdio: 'ignore', timeout: 120_000 });
  }

  topology(): Topology {
    return JSON.parse(readFileSync(join(this.stateDir, 'cells.json'), 'utf8')) as Topology;
  }
  /** A service's log file (`api`, `super-conductor`, `compute-cell1`, ...). */
  logFile(service: string): string {
    return join(this.stateDir, `${service}.log`);
  }

  /** The pid of one of this system's processes (from its pid file). */
  pid(service: string): number {
    const f = join(this.stateDir, `${service}.pid`);
    if (!existsSync(f)) throw new Error(`no pid file for ${service}`);
    return Number(readFileSync(f, 'utf8'));
  }

  /** Stops one of this system's services (`pnpm stack kill`, SIGKILL by default) and waits until it is gone. */
  kill(service: string, signal: NodeJS.Signals = 'SIGKILL'): void {
    execFileSync('node', ['scripts/stack.mjs', 'kill', '--only', service, '--signal', signal, ...this.flags], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 60_000,
    });
  }

  /** Starts a stopped service of this system again (`pnpm stack start --no-build`) and waits until it is ready. */
  start(service: string): void {
    execFileSync('node', ['scripts/stack.mjs', 'start', '--only', service, '--no-build', ...this.flags], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 120_000,
      env: { ...process.env, ...this.env },
    });
  }

  /** Sends `signal` to some of this system's own processes (SIGSTOP/SIGCONT to freeze one at a checkpoint). */
  signal(services: readonly string[], signal: NodeJS.Signals): void {
    for (const s of services) process.kill(this.pid(s), signal);
  }

  /** Names of this system's processes whose name starts with `prefix` (`scheduler-`, `compute-`). */
  services(prefix: string): string[] {
    return readdirSync(this.stateDir)
      .filter((f) => f.startsWith(prefix) && f.endsWith('.pid'))
      .map((f) => f.slice(0, -'.pid'.length))
      .sort();
  }

  /** The control endpoint of every simulated-compute process (from its ready log line). */
  computeControls(): string[] {
    return this.services('compute-').map((s) => {
      const line = readFileSync(this.logFile(s), 'utf8')
        .split('\n')
        .reverse()
        .find((l) => l.includes('"simulated compute ready"'));
      const port = line === undefined ? undefined : (JSON.parse(line) as { control_port?: number }).control_port;
      if (port === undefined) throw new Error(`${s}: no control port in its log`);
      return `http://127.0.0.1:${port}`;
    });
  }

  /** Applies a fault-plan change to every simulated compute; returns each one's plan before it. */
  async setFaults(change: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    const before = [];
    for (const url of this.computeControls()) {
      before.push((await (await fetch(`${url}/faults`)).json()) as Record<string, unknown>);
      const r = await fetch(`${url}/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(change),
      });
      if (r.status !== 200) throw new Error(`PUT ${url}/faults: ${r.status} ${await r.text()}`);
    }
    return before;
  }

  /** Instance uuid → hosts running it, over every simulated compute. */
  async guests(): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const url of this.computeControls()) {
      const byHost = (await (await fetch(`${url}/guests`)).json()) as Record<string, string[]>;
      for (const [host, uuids] of Object.entries(byHost)) for (const u of uuids) out.set(u, [...(out.get(u) ?? []), host]);
    }
    return out;
  }

  /** Instance uuid → host → that guest's state (`power`, `blockMigration` for one a live migration placed), over every simulated compute. */
  async guestDetails(): Promise<Map<string, Record<string, { power: string; blockMigration?: string }>>> {
    const out = new Map<string, Record<string, { power: string; blockMigration?: string }>>();
    for (const url of this.computeControls()) {
      const byHost = (await (await fetch(`${url}/guests/detail`)).json()) as Record<
        string,
        Record<string, { power: string; blockMigration?: string }>
      >;
      for (const [host, guests] of Object.entries(byHost))
        for (const [u, g] of Object.entries(guests)) out.set(u, { ...out.get(u), [host]: g });
    }
    return out;
  }

  /** The trace id of the create request that made `instanceUuid` (the api logs the cast with both). */
  createTraceId(instanceUuid: string): string {
    const line = readFileSync(this.logFile('api'), 'utf8')
      .split('\n')
      .find((l) => l.includes(instanceUuid) && l.includes('"schedule_and_build_instances cast"'));
    const traceId = line === undefined ? undefined : (JSON.parse(line) as { trace_id?: string }).trace_id;
    if (traceId === undefined) throw new Error(`no create of ${instanceUuid} in the api log`);
    return traceId;
  }

  /** `[ready, unacked]` messages summed over the queues of `vhost` whose name `match`es (rabbitmqctl, as the launcher uses it). */
  queueDepth(vhost: string, match: (queue: string) => boolean): [number, number] {
    const out = execFileSync('rabbitmqctl', ['-q', 'list_queues', '-p', vhost, 'name', 'messages_ready', 'messages_unacknowledged'], {
      encoding: 'utf8',
    });
    const rows = out
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length === 3 && match(f[0] ?? ''));
    if (rows.length === 0) throw new Error(`no matching queue in vhost ${vhost}`);
    return rows.reduce<[number, number]>(([r, u], f) => [r + Number(f[1]), u + Number(f[2])], [0, 0]);
  }
  apiTransportUrl(): string {
    return this.topology().apiTransportUrl;
  }
  spansFile(): string {
    return join(this.stateDir, 'spans.jsonl');
  }

  /** `cellsched-manage` against this system's API DB. */
  manage(args: string[]): string {
    return execFileSync('node', ['services/manage/dist/main.js', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CELLSCHED_API_DB_URL: this.topology().apiDbUrl },
    });
  }

  async query<T>(dbUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
    const c = new Client({ connectionString: dbUrl });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows as T[];
    } finally {
      await c.end();
    }
  }

  /** Runs each statement on one connection as `url`'s role: 'ok', or the error's message. The connection itself failing throws. */
  async outcomes(url: string, statements: readonly string[]): Promise<Record<string, string>> {
    const c = new Client({ connectionString: url });
    await c.connect();
    const out: Record<string, string> = {};
    try {
      for (const sql of statements)
        out[sql] = await c.query(sql).then(
          () => 'ok',
          (e: Error) => e.message,
        );
    } finally {
      await c.end();
    }
    return out;
  }

  async api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const r = await fetch(`${this.apiUrl}${path}`, {
      method,
      headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'compute 2.62' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  async placement<T>(path: string): Promise<T> {
    const r = await fetch(`${this.placementUrl}${path}`, {
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
    });
    if (r.status !== 200) throw new Error(`placement GET ${path}: ${r.status}`);
    return (await r.json()) as T;
  }

  /** Every consumer's allocations, by consumer uuid: provider name → resources. */
  async allocationsByConsumer(): Promise<Map<string, Map<string, Record<string, number>>>> {
    const { resource_providers: rps } = await this.placement<{ resource_providers: { uuid: string; name: string }[] }>(
      '/resource_providers',
    );
    const out = new Map<string, Map<string, Record<string, number>>>();
    for (const rp of rps) {
      const { allocations } = await this.placement<{ allocations: Record<string, { resources: Record<string, number> }> }>(
        `/resource_providers/${rp.uuid}/allocations`,
      );
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

/** One span of the span file (OTLP JSON lines), flattened. */
export interface FlatSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string | number | boolean>;
}

/** A span file's rotated files (`spans.<time>-<pid>-<n>.jsonl`, see @cellsched/telemetry's RotatingFile), oldest first, then the file. */
export function spanFiles(file: string): string[] {
  const dir = dirname(file);
  const rotated = readdirSync(dir)
    .filter((n) => /^spans\.\d{8}T\d{9}Z-\d+-\d{6}\.jsonl$/.test(n))
    .sort()
    .map((n) => join(dir, n));
  return existsSync(file) ? [...rotated, file] : rotated;
}

/** Every span of an OTLP JSON-lines span file and its rotated files. */
export function readSpans(file: string): FlatSpan[] {
  const out: FlatSpan[] = [];
  // NOTE: a line is complete once its '\n' is there: the last piece is a line being written (or '')
  for (const line of spanFiles(file).flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(0, -1))) {
    if (line === '') continue;
    for (const rs of (JSON.parse(line) as OtlpLine).resourceSpans ?? []) {
      const service = String(value(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value));
      for (const ss of rs.scopeSpans ?? []) {
        for (const sp of ss.spans ?? []) {
          out.push({
            service,
            name: sp.name,
            kind: sp.kind,
            traceId: sp.traceId,
            spanId: sp.spanId,
            parentSpanId: sp.parentSpanId ?? '',
            attributes: Object.fromEntries((sp.attributes ?? []).map((a) => [a.key, value(a.value)])),
          });
        }
      }
    }
  }
  return out;
}

interface OtlpAttr {
  key: string;
  value: Record<string, string | number | boolean>;
}
interface OtlpLine {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttr[] };
    scopeSpans?: {
      spans?: { name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; attributes?: OtlpAttr[] }[];
    }[];
  }[];
}
const value = (v: Record<string, string | number | boolean> | undefined): string | number | boolean =>
  v === undefined ? '' : (Object.values(v)[0] ?? '');

/** OTel span kinds as numbers in OTLP JSON. */
export const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 } as const;
