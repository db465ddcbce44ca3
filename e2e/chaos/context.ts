// The ChaosContext the runner hands to a scenario: load generator (with the ledger of every
// 202), compute fault control, seeded PRNG, deadline, logging, scenario-level checks.
import { setMaxListeners } from 'node:events';
import { unsettled } from './move-model';
import { seededRng } from './rng';
import type {
  BootOptions,
  BootOutcome,
  ChaosContext,
  FaultControl,
  FaultPlan,
  HttpResult,
  LoadGenerator,
  LoadOptions,
  Profile,
  Rng,
  ServerActionName,
} from './scenario';
import type { ChaosStack } from './stack';

export const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';

/** One server the API accepted (202). */
export interface LedgerEntry {
  id: string;
  acceptedAt: number;
  /** Set when the scenario asked for its deletion: the DELETE's status (0 = connection error). */
  deleteStatus?: number;
}

/** Every id the load generator got a 202 for, and what was asked of it since. */
export class Ledger {
  readonly entries = new Map<string, LedgerEntry>();
  readonly refused: Record<string, number> = {};
  /** Server actions asked of the API: action → HTTP status → count. */
  readonly actions: Record<string, Record<string, number>> = {};
  acted(action: string, status: number): void {
    const a = (this.actions[action] ??= {});
    a[String(status)] = (a[String(status)] ?? 0) + 1;
  }
  /** Actions the API accepted (2xx). */
  actionsAccepted(): number {
    return Object.values(this.actions).reduce(
      (n, by) =>
        n +
        Object.entries(by)
          .filter(([st]) => st.startsWith('2'))
          .reduce((m, [, c]) => m + c, 0),
      0,
    );
  }
  accept(id: string): void {
    this.entries.set(id, { id, acceptedAt: Date.now() });
  }
  refuse(status: number): void {
    this.refused[String(status)] = (this.refused[String(status)] ?? 0) + 1;
  }
  deleted(id: string, status: number): void {
    const e = this.entries.get(id);
    if (e) e.deleteStatus = status;
  }
  /** Ids whose delete the API accepted (204, or 404 for an already-gone one). */
  deletedIds(): string[] {
    return [...this.entries.values()].filter((e) => e.deleteStatus === 204 || e.deleteStatus === 404).map((e) => e.id);
  }
  /** Ids that must exist as ACTIVE or ERROR at quiescence (not deleted, or the delete did not go through). */
  liveIds(): string[] {
    return [...this.entries.values()].filter((e) => e.deleteStatus !== 204 && e.deleteStatus !== 404).map((e) => e.id);
  }
}

type FullPlan = Required<Omit<FaultPlan, 'steps'>> & Pick<FaultPlan, 'steps'>;
const FAULT_OFF: FullPlan = { failRate: 0, nonReschedulableRate: 0, hang: false, crashMidBuild: 0 };

/** The simulated computes' control endpoints; the plan per cell is remembered and re-applied after a restart. */
export class ComputeFaults implements FaultControl {
  private readonly plans = new Map<string, FullPlan>();
  /** Cells whose step faults were ever set: a clear sends `steps: {}` to them (computes without step faults refuse the field). */
  private readonly stepsSet = new Set<string>();
  constructor(private readonly stack: ChaosStack) {
    stack.onStarted = async (name) => {
      if (!name.startsWith('compute-')) return;
      const cell = name.slice('compute-'.length);
      const plan = this.plans.get(cell);
      if (plan) await this.put(cell, plan);
    };
  }

  private cells(cell: string): string[] {
    const all = this.stack.topology().cells.map((c) => c.name);
    if (cell === 'all') return all;
    if (!all.includes(cell)) throw new Error(`faults: unknown cell ${cell}; cells: ${all.join(', ')}`);
    return [cell];
  }

  private async put(cell: string, p: FullPlan): Promise<void> {
    const body = {
      rescheduleRate: p.failRate,
      abortRate: p.nonReschedulableRate,
      hang: p.hang,
      crashRate: p.crashMidBuild,
      ...(this.stepsSet.has(cell) ? { steps: p.steps ?? {} } : {}),
    };
    const r = await fetch(`http://127.0.0.1:${this.stack.controlPort(cell)}/faults`, {
      method: 'PUT',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (r.status !== 200) throw new Error(`faults of ${cell}: PUT /faults ${r.status} ${await r.text()}`);
  }

  async set(cell: string, plan: FaultPlan): Promise<void> {
    for (const c of this.cells(cell)) {
      const merged = { ...(this.plans.get(c) ?? FAULT_OFF), ...plan };
      if (plan.steps !== undefined) this.stepsSet.add(c);
      this.plans.set(c, merged);
      if (this.stack.isRunning(`compute-${c}`)) await this.put(c, merged);
    }
  }

  async clear(): Promise<void> {
    await this.set('all', { ...FAULT_OFF, steps: undefined });
  }

  async guests(cell: string): Promise<Record<string, string[]>> {
    const r = await fetch(`http://127.0.0.1:${this.stack.controlPort(cell)}/guests`, { signal: AbortSignal.timeout(10_000) });
    if (r.status !== 200) throw new Error(`guests of ${cell}: ${r.status}`);
    return (await r.json()) as Record<string, string[]>;
  }
}

/** Nova's minimal body of each server action (what `openstack server <verb>` sends). */
export function defaultActionArgs(action: ServerActionName): unknown {
  switch (action) {
    case 'reboot':
      return { type: 'SOFT' };
    case 'rebuild':
      return { imageRef: IMAGE };
    case 'resize':
      return { flavorRef: '2' };
    case 'os-migrateLive':
      return { host: null, block_migration: 'auto' };
    case 'evacuate':
      return {};
    default:
      return null;
  }
}

/** POST /servers/{id}/action; counted in the ledger by action and status (0: the request failed). */
export async function serverAction(
  stack: ChaosStack,
  ledger: Ledger,
  id: string,
  action: ServerActionName,
  args?: unknown,
): Promise<HttpResult<unknown>> {
  let r: HttpResult<unknown>;
  try {
    r = await stack.api('POST', `/servers/${id}/action`, { [action]: args === undefined ? defaultActionArgs(action) : args });
  } catch (e) {
    r = { status: 0, body: (e as Error).message };
  }
  ledger.acted(action, r.status);
  return r;
}

/** POST /servers one at a time per slot; records 202s in the ledger. */
async function createOne(stack: ChaosStack, ledger: Ledger, name: string, o: BootOptions): Promise<string | undefined> {
  try {
    const r = await stack.api<{ server?: { id: string } }>(
      'POST',
      '/servers',
      {
        server: { name, flavorRef: o.flavor ?? '1', imageRef: IMAGE, networks: 'none', ...(o.extra ?? {}) },
        ...(o.hints === undefined ? {} : { 'os:scheduler_hints': o.hints }),
      },
      o.token ?? 'admin',
    );
    const id = r.body?.server?.id;
    if (r.status === 202 && id !== undefined) {
      ledger.accept(id);
      return id;
    }
    ledger.refuse(r.status);
  } catch {
    ledger.refuse(0);
  }
  return undefined;
}

export class BackgroundLoad implements LoadGenerator {
  private loop: Promise<void> | undefined;
  private stopping = false;
  private ids: string[] = [];
  constructor(
    private readonly stack: ChaosStack,
    private readonly ledger: Ledger,
    private readonly rng: Rng,
    private readonly namePrefix: string,
    private readonly del: (id: string) => Promise<number>,
  ) {}

  get running(): boolean {
    return this.loop !== undefined;
  }

  start(opts: LoadOptions): void {
    if (this.loop) throw new Error('load already running');
    if (!(opts.rate > 0)) throw new Error('load rate must be > 0');
    this.stopping = false;
    this.ids = [];
    const inflight = new Set<Promise<void>>();
    const period = 1000 / opts.rate;
    let n = 0;
    this.loop = (async () => {
      let next = Date.now();
      while (!this.stopping) {
        if (inflight.size < 32) {
          const p = (async () => {
            const id = await createOne(this.stack, this.ledger, `${this.namePrefix}-load-${n++}`, { flavor: opts.flavor });
            if (id === undefined) return;
            this.ids.push(id);
            if (this.rng.next() < (opts.deleteShare ?? 0)) {
              await new Promise((r) => setTimeout(r, this.rng.int(0, 2000)));
              await this.del(id);
            }
          })();
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
        }
        next += period;
        const sleep = next - Date.now();
        if (sleep > 0) await new Promise((r) => setTimeout(r, sleep));
        else next = Date.now();
      }
      await Promise.all(inflight);
    })();
  }

  async stop(): Promise<string[]> {
    this.stopping = true;
    await this.loop;
    this.loop = undefined;
    return this.ids;
  }
}

/** A scenario-level check or note, for the report. */
export interface Expectation {
  ok: boolean;
  message: string;
}

export interface ContextParts {
  scenario: string;
  stack: ChaosStack;
  profile: Profile;
  seed: number;
  timeoutMs: number;
  ledger: Ledger;
  faults: ComputeFaults;
  print: (line: string) => void;
}

export interface RunContext extends ChaosContext {
  readonly expectations: Expectation[];
  readonly notes: Record<string, unknown>;
  readonly logLines: string[];
  readonly abort: AbortController;
}

/** Builds the context of one scenario run. */
export function createContext(p: ContextParts): RunContext {
  const rng = seededRng(p.seed);
  const abort = new AbortController();
  setMaxListeners(10_000, abort.signal); // every pending ctx.wait listens to it
  const deadline = Date.now() + p.timeoutMs;
  const expectations: Expectation[] = [];
  const notes: Record<string, unknown> = {};
  const logLines: string[] = [];
  const t0 = Date.now();
  const log = (m: string): void => {
    const line = `[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`;
    logLines.push(line);
    p.print(line);
  };
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (abort.signal.aborted) {
        reject(new Error('scenario deadline passed'));
        return;
      }
      const t = setTimeout(() => {
        abort.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(t);
        reject(new Error('scenario deadline passed'));
      };
      abort.signal.addEventListener('abort', onAbort, { once: true });
    });
  const deleteServer = async (id: string): Promise<number> => {
    let status = 0;
    try {
      status = (await p.stack.api('DELETE', `/servers/${id}`)).status;
    } catch {
      status = 0;
    }
    p.ledger.deleted(id, status);
    return status;
  };
  const bootDetailed = async (n: number, o: BootOptions = {}): Promise<BootOutcome> => {
    const burst = Math.max(1, o.burst ?? 10);
    const accepted: string[] = [];
    const before = { ...p.ledger.refused };
    for (let i = 0; i < n; i += burst) {
      const k = Math.min(burst, n - i);
      const ids = await Promise.all(
        Array.from({ length: k }, (_, j) => createOne(p.stack, p.ledger, `${o.name ?? `chaos-${p.scenario}`}-${i + j}`, o)),
      );
      for (const id of ids) if (id !== undefined) accepted.push(id);
      if (o.pauseMs && i + burst < n) await wait(o.pauseMs);
    }
    const refused: Record<string, number> = {};
    for (const [k, v] of Object.entries(p.ledger.refused)) if (v - (before[k] ?? 0) > 0) refused[k] = v - (before[k] ?? 0);
    return { accepted, refused };
  };
  const ctx: RunContext = {
    scenario: p.scenario,
    stack: p.stack,
    profile: p.profile,
    seed: p.seed,
    rng,
    deadline,
    signal: abort.signal,
    abort,
    expectations,
    notes,
    logLines,
    scale: (n) => Math.max(1, Math.round(n * p.profile.scale)),
    bootDetailed,
    boot: async (n, o) => (await bootDetailed(n, o)).accepted,
    deleteServer,
    act: (id, action, args) => serverAction(p.stack, p.ledger, id, action, args),
    liveServers: () => p.ledger.liveIds(),
    load: new BackgroundLoad(p.stack, p.ledger, rng.fork(), `chaos-${p.scenario}`, deleteServer),
    faults: p.faults,
    log,
    wait,
    waitFor: async (what, check, timeoutMs = 120_000) => {
      const until = Math.min(deadline, Date.now() + timeoutMs);
      for (;;) {
        const v = await check();
        if (v !== undefined) return v;
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await wait(500);
      }
    },
    quiesce: (timeoutMs = 120_000) => quiesce(p.stack, timeoutMs),
    expect: (ok, message) => {
      expectations.push({ ok, message });
      if (!ok) log(`EXPECTATION FAILED: ${message}`);
    },
    note: (key, value) => {
      notes[key] = value;
    },
  };
  return ctx;
}

interface ServerRow {
  id: string;
  status: string;
  'OS-EXT-STS:task_state'?: string | null;
}

/** Servers of every cell (admin, all tenants), with the API's marker for a cell it could not reach. */
export async function listServers(stack: ChaosStack): Promise<ServerRow[]> {
  const out: ServerRow[] = [];
  let marker: string | undefined;
  for (;;) {
    const r = await stack.api<{ servers: ServerRow[] }>(
      'GET',
      `/servers/detail?all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`GET /servers/detail: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    out.push(...r.body.servers);
    if (r.body.servers.length < 1000) return out;
    marker = r.body.servers[r.body.servers.length - 1]?.id;
  }
}

/** The API DB's server_task_intents (an accepted action not yet held by its cell), if the table exists. */
async function pendingIntents(stack: ChaosStack): Promise<{ instance_uuid: string; action: string }[]> {
  const url = stack.adminUrl(`${stack.prefix}_api`);
  const [t] = await stack.query<{ ok: boolean }>(url, "SELECT to_regclass('server_task_intents') IS NOT NULL AS ok");
  return t?.ok ? stack.query(url, 'SELECT instance_uuid::text, action FROM server_task_intents') : [];
}

/**
 * Waits (bounded) until every server is at rest — no BUILD, no task_state (a move, a
 * lifecycle action), no build request, no pending action intent — and returns what is still
 * not, id → why (`BUILD/spawning`, `RESIZE/resize_migrating`, `build request`, `intent migrate`).
 */
export async function quiesceDetailed(stack: ChaosStack, timeoutMs: number): Promise<Map<string, string>> {
  const until = Date.now() + timeoutMs;
  let pending = new Map<string, string>();
  let quiet = 0;
  for (;;) {
    try {
      pending = new Map();
      for (const s of await listServers(stack)) {
        const why = unsettled(s);
        if (why !== undefined) pending.set(s.id, why);
      }
      const br = await stack.query<{ instance_uuid: string }>(
        stack.adminUrl(`${stack.prefix}_api`),
        'SELECT instance_uuid::text FROM build_requests',
      );
      for (const b of br) if (!pending.has(b.instance_uuid)) pending.set(b.instance_uuid, 'build request');
      for (const i of await pendingIntents(stack)) if (!pending.has(i.instance_uuid)) pending.set(i.instance_uuid, `intent ${i.action}`);
      // NOTE: quiet twice in a row: one listing can catch a server between its cell's row and its pending action
      quiet = pending.size === 0 ? quiet + 1 : 0;
      if (quiet >= 2) return pending;
    } catch (e) {
      pending = new Map([[`(listing failed: ${(e as Error).message})`, 'unknown']]);
    }
    if (Date.now() > until) return pending;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Waits (bounded) until every server is at rest (see quiesceDetailed); returns the ids still not. */
export async function quiesce(stack: ChaosStack, timeoutMs: number): Promise<string[]> {
  return [...(await quiesceDetailed(stack, timeoutMs)).keys()];
}
