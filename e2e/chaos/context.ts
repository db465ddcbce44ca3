// The ChaosContext the runner hands to a scenario: load generator (with the ledger of every
// 202), compute fault control, seeded PRNG, deadline, logging, scenario-level checks.
import { setMaxListeners } from 'node:events';
import { seededRng } from './rng';
import type {
  BootOptions, BootOutcome, ChaosContext, FaultControl, FaultPlan, LoadGenerator, LoadOptions, Profile, Rng,
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
  accept(id: string): void { this.entries.set(id, { id, acceptedAt: Date.now() }); }
  refuse(status: number): void { this.refused[String(status)] = (this.refused[String(status)] ?? 0) + 1; }
  deleted(id: string, status: number): void {
    const e = this.entries.get(id);
    if (e) e.deleteStatus = status;
  }
  /** Ids whose delete the API accepted (204, or 404 for an already-gone one). */
  deletedIds(): string[] { return [...this.entries.values()].filter((e) => e.deleteStatus === 204 || e.deleteStatus === 404).map((e) => e.id); }
  /** Ids that must exist as ACTIVE or ERROR at quiescence (not deleted, or the delete did not go through). */
  liveIds(): string[] { return [...this.entries.values()].filter((e) => e.deleteStatus !== 204 && e.deleteStatus !== 404).map((e) => e.id); }
}

const FAULT_OFF: Required<FaultPlan> = { failRate: 0, nonReschedulableRate: 0, hang: false, crashMidBuild: 0 };

/** The simulated computes' control endpoints; the plan per cell is remembered and re-applied after a restart. */
export class ComputeFaults implements FaultControl {
  private readonly plans = new Map<string, Required<FaultPlan>>();
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

  private async put(cell: string, p: Required<FaultPlan>): Promise<void> {
    const body = { rescheduleRate: p.failRate, abortRate: p.nonReschedulableRate, hang: p.hang, crashRate: p.crashMidBuild };
    const r = await fetch(`http://127.0.0.1:${this.stack.controlPort(cell)}/faults`, {
      method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000),
    });
    if (r.status !== 200) throw new Error(`faults of ${cell}: PUT /faults ${r.status} ${await r.text()}`);
  }

  async set(cell: string, plan: FaultPlan): Promise<void> {
    for (const c of this.cells(cell)) {
      const merged = { ...(this.plans.get(c) ?? FAULT_OFF), ...plan };
      this.plans.set(c, merged);
      if (this.stack.isRunning(`compute-${c}`)) await this.put(c, merged);
    }
  }

  async clear(): Promise<void> { await this.set('all', FAULT_OFF); }

  async guests(cell: string): Promise<Record<string, string[]>> {
    const r = await fetch(`http://127.0.0.1:${this.stack.controlPort(cell)}/guests`, { signal: AbortSignal.timeout(10_000) });
    if (r.status !== 200) throw new Error(`guests of ${cell}: ${r.status}`);
    return (await r.json()) as Record<string, string[]>;
  }
}

/** POST /servers one at a time per slot; records 202s in the ledger. */
async function createOne(stack: ChaosStack, ledger: Ledger, name: string, o: BootOptions): Promise<string | undefined> {
  try {
    const r = await stack.api<{ server?: { id: string } }>('POST', '/servers',
      { server: { name, flavorRef: o.flavor ?? '1', imageRef: IMAGE, networks: 'none', ...(o.extra ?? {}) },
        ...(o.hints === undefined ? {} : { 'os:scheduler_hints': o.hints }) }, o.token ?? 'admin');
    const id = r.body?.server?.id;
    if (r.status === 202 && id !== undefined) { ledger.accept(id); return id; }
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
  constructor(private readonly stack: ChaosStack, private readonly ledger: Ledger, private readonly rng: Rng, private readonly namePrefix: string,
    private readonly del: (id: string) => Promise<number>) {}

  get running(): boolean { return this.loop !== undefined; }

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
export interface Expectation { ok: boolean; message: string }

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
  const wait = (ms: number): Promise<void> => new Promise((resolve, reject) => {
    if (abort.signal.aborted) { reject(new Error('scenario deadline passed')); return; }
    const t = setTimeout(() => { abort.signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = (): void => { clearTimeout(t); reject(new Error('scenario deadline passed')); };
    abort.signal.addEventListener('abort', onAbort, { once: true });
  });
  const deleteServer = async (id: string): Promise<number> => {
    let status = 0;
    try { status = (await p.stack.api('DELETE', `/servers/${id}`)).status; } catch { status = 0; }
    p.ledger.deleted(id, status);
    return status;
  };
  const bootDetailed = async (n: number, o: BootOptions = {}): Promise<BootOutcome> => {
    const burst = Math.max(1, o.burst ?? 10);
    const accepted: string[] = [];
    const before = { ...p.ledger.refused };
    for (let i = 0; i < n; i += burst) {
      const k = Math.min(burst, n - i);
      const ids = await Promise.all(Array.from({ length: k }, (_, j) => createOne(p.stack, p.ledger, `${o.name ?? `chaos-${p.scenario}`}-${i + j}`, o)));
      for (const id of ids) if (id !== undefined) accepted.push(id);
      if (o.pauseMs && i + burst < n) await wait(o.pauseMs);
    }
    const refused: Record<string, number> = {};
    for (const [k, v] of Object.entries(p.ledger.refused)) if (v - (before[k] ?? 0) > 0) refused[k] = v - (before[k] ?? 0);
    return { accepted, refused };
  };
  const ctx: RunContext = {
    scenario: p.scenario, stack: p.stack, profile: p.profile, seed: p.seed, rng, deadline, signal: abort.signal, abort,
    expectations, notes, logLines,
    scale: (n) => Math.max(1, Math.round(n * p.profile.scale)),
    bootDetailed,
    boot: async (n, o) => (await bootDetailed(n, o)).accepted,
    deleteServer,
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
    expect: (ok, message) => { expectations.push({ ok, message }); if (!ok) log(`EXPECTATION FAILED: ${message}`); },
    note: (key, value) => { notes[key] = value; },
  };
  return ctx;
}

interface ServerRow { id: string; status: string }

/** Servers of every cell (admin, all tenants), with the API's marker for a cell it could not reach. */
export async function listServers(stack: ChaosStack): Promise<ServerRow[]> {
  const out: ServerRow[] = [];
  let marker: string | undefined;
  for (;;) {
    const r = await stack.api<{ servers: ServerRow[] }>('GET', `/servers/detail?all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`);
    if (r.status !== 200) throw new Error(`GET /servers/detail: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    out.push(...r.body.servers);
    if (r.body.servers.length < 1000) return out;
    marker = r.body.servers[r.body.servers.length - 1]?.id;
  }
}

/** Waits (bounded) until no server is BUILD and no build request is left; returns the ids still not settled. */
export async function quiesce(stack: ChaosStack, timeoutMs: number): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  let pending: string[] = [];
  for (;;) {
    try {
      const servers = await listServers(stack);
      pending = servers.filter((s) => s.status !== 'ACTIVE' && s.status !== 'ERROR').map((s) => s.id);
      const br = await stack.query<{ instance_uuid: string }>(stack.adminUrl(`${stack.prefix}_api`), 'SELECT instance_uuid FROM build_requests');
      pending = [...new Set([...pending, ...br.map((b) => b.instance_uuid)])];
      if (pending.length === 0) return [];
    } catch (e) {
      pending = [`(listing failed: ${(e as Error).message})`];
    }
    if (Date.now() > until) return pending;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
