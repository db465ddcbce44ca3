// `pnpm chaos` (scripts/chaos.mjs runs this with tsx): brings up a private stack, runs the
// scenarios one after another (each bounded in time, each with a seed derived from the run's),
// checks the invariants after each at quiescence, cleans up, writes a JSON report and prints
// a summary table. Exit code 1 when any invariant, scenario check or scenario fails.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ComputeFaults, createContext, Ledger, listServers } from './context';
import { checkInvariants, INVARIANTS, type InvariantResult } from './invariants';
import { Monitor } from './monitor';
import { randomSeed } from './rng';
import type { Profile, Scenario, StackShape } from './scenario';
import { SCENARIOS } from './scenarios';
import { ChaosStack, ROOT } from './stack';
import { parseDuration, scenarioSeed, soakOrder } from './util';

const PROFILES: Record<'ci' | 'full', Profile & { settleMs: number }> = {
  ci: { name: 'ci', stack: { cells: 2, hostsPerCell: 3, schedulers: 2, buildLatencyMs: 100 }, scale: 0.25, settleMs: 60_000 },
  full: { name: 'full', stack: { cells: 2, hostsPerCell: 6, schedulers: 3, buildLatencyMs: 200 }, scale: 1, settleMs: 120_000 },
};

interface Args {
  profile: 'ci' | 'full';
  durationMs: number | undefined;
  only: string[] | undefined;
  seed: number;
  out: string | undefined;
  portOffset: number;
  prefix: string;
  keep: boolean;
  list: boolean;
  failRate: number;
}

const USAGE = `usage: pnpm chaos [--profile ci|full] [--duration 30m] [--only name,...] [--seed N] [--out report.json]
                  [--fail-rate R] [--port-offset 5000] [--prefix chaos] [--keep] [--list]
  --fail-rate R   baseline share of builds failing reschedulably in every cell, set before each scenario (which may override it)`;

function parseArgs(argv: string[]): Args {
  const a: Args = {
    profile: 'full',
    durationMs: undefined,
    only: undefined,
    seed: randomSeed(),
    out: undefined,
    portOffset: 5000,
    prefix: 'chaos',
    keep: false,
    list: false,
    failRate: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] ?? '').split(/=(.*)/s);
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--profile') {
      const v = value();
      if (v !== 'ci' && v !== 'full') throw new Error('--profile: ci or full');
      a.profile = v;
    } else if (flag === '--duration') a.durationMs = parseDuration(value());
    else if (flag === '--only') a.only = value().split(',').filter(Boolean);
    else if (flag === '--seed') {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 0 || v > 4294967295) throw new Error('--seed: an integer in [0, 2^32)');
      a.seed = v;
    } else if (flag === '--out') a.out = value();
    else if (flag === '--port-offset') {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 0 || v > 50000) throw new Error('--port-offset: an integer in [0, 50000]');
      a.portOffset = v;
    } else if (flag === '--prefix') {
      const v = value();
      if (!/^[a-z][a-z0-9_]{0,20}$/.test(v)) throw new Error('--prefix: [a-z][a-z0-9_]*');
      a.prefix = v;
    } else if (flag === '--keep') a.keep = true;
    else if (flag === '--fail-rate') {
      const v = Number(value());
      if (!(v >= 0 && v <= 1)) throw new Error('--fail-rate: a number in [0, 1]');
      a.failRate = v;
    } else if (flag === '--list') a.list = true;
    else if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${argv[i]}\n${USAGE}`);
  }
  return a;
}

interface ScenarioReport {
  name: string;
  iteration: number;
  seed: number;
  startedAt: string;
  durationMs: number;
  builds: number;
  active: number;
  error: number;
  errorInCell0: number;
  deleted: number;
  refused: Record<string, number>;
  attempts: number;
  failedAttempts: number;
  /** Server actions asked (action → HTTP status → count) and how many the API accepted. */
  actions: Record<string, Record<string, number>>;
  actionsAccepted: number;
  kills: number;
  starts: number;
  killed: string[];
  invariants: InvariantResult[];
  expectations: { ok: boolean; message: string }[];
  notes: Record<string, unknown>;
  failure?: string;
  ok: boolean;
  log: string[];
}

const shapeKey = (s: StackShape): string => JSON.stringify([s.cells, s.hostsPerCell, s.schedulers, s.buildLatencyMs]);
const secs = (ms: number): string => `${(ms / 1000).toFixed(0)}s`;

class Progress {
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly tty: boolean) {}
  line(s: string): void {
    if (this.tty) process.stdout.write('\r\x1b[K');
    console.log(s);
  }
  status(get: () => string): void {
    this.stop();
    this.timer = setInterval(
      () => {
        if (this.tty) process.stdout.write(`\r\x1b[K${get()}`);
        else console.log(get());
      },
      this.tty ? 1000 : 15_000,
    );
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty) process.stdout.write('\r\x1b[K');
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const profileBase = PROFILES[args.profile];
  const profile: Profile & { settleMs: number } = args.durationMs !== undefined ? { ...profileBase, name: 'soak' } : profileBase;
  let scenarios = SCENARIOS.filter((s) => args.profile !== 'ci' || s.ci);
  if (args.only) {
    const unknown = args.only.filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    scenarios = SCENARIOS.filter((s) => args.only?.includes(s.name));
  }
  // a soak interleaves the move scenarios with the build ones, so moves are mixed in from the first minutes
  if (args.durationMs !== undefined) scenarios = soakOrder(scenarios);
  if (args.list) {
    for (const s of SCENARIOS) console.log(`${s.ci ? 'ci ' : '   '} ${s.name.padEnd(32)} ${s.summary}`);
    return;
  }
  if (scenarios.length === 0) throw new Error('no scenario selected');

  const progress = new Progress(process.stdout.isTTY);
  const t0 = Date.now();
  progress.line(
    `chaos: profile ${profile.name}, seed ${args.seed} (repeat with --seed ${args.seed}), ${scenarios.length} scenario(s): ${scenarios.map((s) => s.name).join(', ')}`,
  );
  const reports: ScenarioReport[] = [];
  let stack: ChaosStack | undefined;
  let monitor: Monitor | undefined;
  let faults: ComputeFaults | undefined;
  let stopping = false;
  const onSignal = (): void => {
    stopping = true;
    progress.line('chaos: interrupted; finishing the current scenario and stopping the stack');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    for (let iteration = 0; !stopping; iteration++) {
      for (const sc of scenarios) {
        if (stopping) break;
        if (args.durationMs !== undefined && Date.now() - t0 > args.durationMs) {
          stopping = true;
          break;
        }
        const shape = { ...profile.stack, ...(sc.stack ?? {}) };
        if (stack === undefined || shapeKey(stack.shape) !== shapeKey(shape)) {
          if (stack) {
            await monitor?.stop();
            progress.line('stack: another shape; stopping the current stack');
            await stack.down();
          }
          progress.line(
            `stack: up ${shape.cells} cells x ${shape.hostsPerCell} hosts, ${shape.schedulers} schedulers, build ${shape.buildLatencyMs} ms (prefix ${args.prefix}, port offset ${args.portOffset})`,
          );
          const tUp = Date.now();
          stack = new ChaosStack(args.prefix, args.portOffset, shape);
          await stack.down().catch(() => undefined); // a previous run's leftovers under the same prefix
          await stack.up();
          faults = new ComputeFaults(stack);
          monitor = new Monitor(stack);
          monitor.start();
          progress.line(`stack: up in ${secs(Date.now() - tUp)}, state ${stack.stateDir}`);
        }
        reports.push(await runScenario(sc, iteration, args, profile, stack, faults as ComputeFaults, monitor as Monitor, progress));
      }
      if (args.durationMs === undefined) break;
    }
  } finally {
    progress.stop();
    await monitor?.stop();
    if (stack && !args.keep) {
      progress.line('stack: down --purge');
      await stack.down().catch((e: unknown) => {
        console.error((e as Error).message);
      });
    } else if (stack)
      progress.line(
        `stack kept: state ${stack.stateDir} (pnpm stack down --purge --state-dir ${stack.stateDir} --prefix ${args.prefix} --port-offset ${args.portOffset})`,
      );
  }

  const ok = reports.length > 0 && reports.every((r) => r.ok);
  const outPath = resolve(
    args.out ?? join(ROOT, 'e2e/chaos/results', `chaos-${profile.name}-${new Date(t0).toISOString().replace(/[:.]/g, '-')}.json`),
  );
  mkdirSync(resolve(outPath, '..'), { recursive: true });
  const report = {
    startedAt: new Date(t0).toISOString(),
    durationMs: Date.now() - t0,
    profile: profile.name,
    seed: args.seed,
    baselineFailRate: args.failRate,
    command: `pnpm chaos ${process.argv.slice(2).join(' ')}`,
    ok,
    totals: totals(reports),
    scenarios: reports,
  };
  writeFileSync(outPath, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${table(reports)}\n${totalsLine(reports)}\nreport: ${outPath}`);
  console.log(`chaos: ${reports.filter((r) => r.ok).length} passed, ${reports.filter((r) => !r.ok).length} failed (seed ${args.seed})`);
  process.exitCode = ok ? 0 : 1;
}

async function runScenario(
  sc: Scenario,
  iteration: number,
  args: Args,
  profile: Profile & { settleMs: number },
  stack: ChaosStack,
  faults: ComputeFaults,
  monitor: Monitor,
  progress: Progress,
): Promise<ScenarioReport> {
  const seed = scenarioSeed(args.seed, sc.name, iteration);
  const start = Date.now();
  const ledger = new Ledger();
  const eventsBefore = stack.events.length;
  const logsFrom = stack.logOffsets();
  await faults.clear();
  if (args.failRate > 0 && sc.baselineFaults !== false) await faults.set('all', { failRate: args.failRate });
  monitor.take(); // findings from before this scenario (cleanup) are not its own
  const timeoutMs = Math.round((sc.timeoutMs ?? 90_000) * Math.max(1, profile.name === 'ci' ? 1 : profile.scale));
  const ctx = createContext({
    scenario: sc.name,
    stack,
    profile,
    seed,
    timeoutMs,
    ledger,
    faults,
    print: (l) => progress.line(`  ${sc.name}: ${l}`),
  });
  progress.line(
    `\n▶ ${sc.name}${iteration ? ` (iteration ${iteration + 1})` : ''} — seed ${seed}, bound ${secs(timeoutMs)}: ${sc.summary}`,
  );
  progress.status(
    () =>
      `  ${sc.name}: ${secs(Date.now() - start)} accepted ${ledger.entries.size}, deleted ${ledger.deletedIds().length}, kills ${stack.events.slice(eventsBefore).filter((e) => e.what === 'kill').length}`,
  );
  let failure: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sc.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          ctx.abort.abort();
          reject(new Error(`scenario exceeded its ${secs(timeoutMs)} bound`));
        }, timeoutMs);
      }),
    ]);
  } catch (e) {
    failure = (e as Error).stack?.split('\n').slice(0, 4).join(' | ') ?? String(e);
    ctx.log(`FAILED: ${failure}`);
  } finally {
    clearTimeout(timer);
    ctx.abort.abort();
  }
  if (ctx.load.running) await ctx.load.stop();
  await faults.clear().catch((e: unknown) => ctx.log(`clearing faults: ${(e as Error).message}`));
  for (const s of stack.services()) {
    if (!stack.isRunning(s)) {
      ctx.log(`${s} left stopped by the scenario: starting it`);
      await stack.start(s).catch((e: unknown) => {
        failure ??= `restart of ${s} failed: ${(e as Error).message}`;
      });
    }
  }
  progress.status(() => `  ${sc.name}: checking invariants (quiescence bound ${secs(profile.settleMs)}) ${secs(Date.now() - start)}`);
  let results: InvariantResult[] = [];
  let stats = {
    accepted: ledger.entries.size,
    deleted: ledger.deletedIds().length,
    active: 0,
    error: 0,
    errorInCell0: 0,
    other: 0,
    attempts: 0,
    failedAttempts: 0,
    deadLettered: 0,
  };
  try {
    const c = await checkInvariants(stack, ledger, monitor, { settleMs: profile.settleMs, logsFrom, since: start });
    results = c.results;
    stats = c.stats;
    ctx.note('deadLettered', c.stats.deadLettered);
  } catch (e) {
    failure ??= `invariant check failed to run: ${(e as Error).message}`;
    results = INVARIANTS.map((name) => ({ name, ok: false, problems: [`not checked: ${(e as Error).message}`], count: 1 }));
  }
  progress.stop();
  const durationMs = Date.now() - start;
  const events = stack.events.slice(eventsBefore);
  for (const r of results) if (!r.ok) ctx.log(`INVARIANT ${r.name} FAILED (${r.count}): ${r.problems.slice(0, 5).join(' | ')}`);
  await cleanup(stack, ctx);
  const ok = failure === undefined && results.every((r) => r.ok) && ctx.expectations.every((e) => e.ok);
  progress.line(
    `${ok ? '✔' : '✘'} ${sc.name}: ${stats.accepted} builds, ${stats.active} ACTIVE, ${stats.error} ERROR, ${ledger.actionsAccepted()} actions, ${events.filter((e) => e.what === 'kill').length} kills, ${secs(durationMs)}${ok ? '' : ' — FAILED'}`,
  );
  return {
    name: sc.name,
    iteration,
    seed,
    startedAt: new Date(start).toISOString(),
    durationMs,
    builds: stats.accepted,
    active: stats.active,
    error: stats.error,
    errorInCell0: stats.errorInCell0,
    deleted: stats.deleted,
    refused: ledger.refused,
    attempts: stats.attempts,
    failedAttempts: stats.failedAttempts,
    actions: ledger.actions,
    actionsAccepted: ledger.actionsAccepted(),
    kills: events.filter((e) => e.what === 'kill').length,
    starts: events.filter((e) => e.what === 'start').length,
    killed: events.filter((e) => e.what === 'kill').map((e) => `${e.service}:${e.signal ?? ''}`),
    invariants: results,
    expectations: ctx.expectations,
    notes: ctx.notes,
    ...(failure ? { failure } : {}),
    ok,
    log: ctx.logLines,
  };
}

/** Deletes every server and waits (≤ 90 s) until none is listed and placement holds no allocation: the next scenario starts from an empty cloud. */
async function cleanup(stack: ChaosStack, ctx: ReturnType<typeof createContext>): Promise<void> {
  const until = Date.now() + 90_000;
  for (;;) {
    let servers: { id: string }[] = [];
    let allocs = 0;
    try {
      servers = await listServers(stack);
      allocs = Number(
        (
          await stack.query<{ n: string }>(
            stack.adminUrl(`${stack.prefix}_placement`),
            'SELECT count(DISTINCT consumer_id) AS n FROM allocations',
          )
        )[0]?.n ?? 0,
      );
    } catch (e) {
      ctx.log(`cleanup: ${(e as Error).message}`);
    }
    let guests: string[] = [];
    if (servers.length === 0 && allocs === 0) {
      // nothing listed, nothing allocated: the computes must run nothing either (a deleted server's guest is terminated)
      guests = await runningGuests(stack).catch((e: unknown) => [`(guests: ${(e as Error).message})`]);
      if (guests.length === 0) return;
    }
    if (Date.now() > until) {
      ctx.expect(
        false,
        `cleanup: ${servers.length} servers, ${allocs} allocation consumers and ${guests.length} guests left 90 s after deleting everything${guests.length ? ` (${guests.slice(0, 5).join(', ')})` : ''}`,
      );
      return;
    }
    for (let i = 0; i < servers.length; i += 20) {
      await Promise.all(servers.slice(i, i + 20).map((s) => stack.api('DELETE', `/servers/${s.id}`).catch(() => undefined)));
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** `host/instance` of every guest the running computes report. */
async function runningGuests(stack: ChaosStack): Promise<string[]> {
  const out: string[] = [];
  for (const c of stack.topology().cells) {
    if (!stack.isRunning(`compute-${c.name}`)) continue;
    const r = await fetch(`http://127.0.0.1:${stack.controlPort(c.name)}/guests`, { signal: AbortSignal.timeout(10_000) });
    for (const [host, uuids] of Object.entries((await r.json()) as Record<string, string[]>))
      for (const u of uuids) out.push(`${host}/${u}`);
  }
  return out;
}

function totals(rs: ScenarioReport[]) {
  const sum = (f: (r: ScenarioReport) => number): number => rs.reduce((a, r) => a + f(r), 0);
  return {
    scenarios: rs.length,
    failed: rs.filter((r) => !r.ok).length,
    builds: sum((r) => r.builds),
    active: sum((r) => r.active),
    error: sum((r) => r.error),
    attempts: sum((r) => r.attempts),
    failedAttempts: sum((r) => r.failedAttempts),
    actions: sum((r) => r.actionsAccepted),
    kills: sum((r) => r.kills),
    lost: sum((r) => r.invariants.find((i) => i.name === 'none-lost')?.count ?? 0),
    allocationProblems: sum((r) => r.invariants.find((i) => i.name === 'allocations-exact')?.count ?? 0),
    migrationsNotFinal: sum((r) => r.invariants.find((i) => i.name === 'migrations-final')?.count ?? 0),
    overCapacity: sum((r) => r.invariants.find((i) => i.name === 'capacity')?.count ?? 0),
    singleHostViolations: sum((r) => r.invariants.find((i) => i.name === 'single-host')?.count ?? 0),
    auditProblems: sum((r) => r.invariants.find((i) => i.name === 'audit')?.count ?? 0),
    groupViolations: sum((r) => r.invariants.find((i) => i.name === 'server-groups')?.count ?? 0),
  };
}

const SHORT: Record<string, string> = {
  settled: 'settled',
  'dead-letters': 'dlq',
  'none-lost': 'lost',
  'allocations-exact': 'alloc',
  'migrations-final': 'migr',
  capacity: 'cap',
  'single-host': '1host',
  isolation: 'iso',
  'error-faults': 'fault',
  audit: 'audit',
  'server-groups': 'groups',
};

function table(rs: ScenarioReport[]): string {
  const head = [
    'scenario',
    'seed',
    'builds',
    'ACTIVE',
    'ERROR',
    'failed attempts',
    'actions',
    'kills',
    ...INVARIANTS.map((i) => SHORT[i] ?? i),
    'checks',
    'duration',
  ];
  const rows = rs.map((r) => [
    `${r.name}${r.iteration ? `#${r.iteration + 1}` : ''}`,
    String(r.seed),
    String(r.builds),
    String(r.active),
    String(r.error),
    `${r.failedAttempts}/${r.attempts}`,
    String(r.actionsAccepted),
    String(r.kills),
    ...INVARIANTS.map((n) => {
      const x = r.invariants.find((i) => i.name === n);
      return x === undefined ? '-' : x.ok ? 'pass' : `FAIL(${x.count})`;
    }),
    r.failure
      ? 'FAIL(run)'
      : r.expectations.every((e) => e.ok)
        ? `pass(${r.expectations.length})`
        : `FAIL(${r.expectations.filter((e) => !e.ok).length})`,
    secs(r.durationMs),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmtRow = (r: string[]): string => `| ${r.map((c, i) => c.padEnd(w[i] ?? 0)).join(' | ')} |`;
  return [fmtRow(head), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.map(fmtRow)].join('\n');
}

function totalsLine(rs: ScenarioReport[]): string {
  const t = totals(rs);
  const pct = t.attempts ? Math.round((100 * t.failedAttempts) / t.attempts) : 0;
  return `totals: ${t.builds} builds, ${t.active} ACTIVE, ${t.error} ERROR, ${t.failedAttempts}/${t.attempts} build attempts failed (${pct}%), ${t.actions} server actions accepted, ${t.kills} kills; lost ${t.lost}, allocation problems ${t.allocationProblems}, migrations not final ${t.migrationsNotFinal}, over capacity ${t.overCapacity}, single-host violations (duplicate or ghost guests) ${t.singleHostViolations}, audit problems (failed or missing passes, orphans) ${t.auditProblems}, server-group violations ${t.groupViolations}`;
}

main().catch((e: unknown) => {
  console.error(`chaos: ${(e as Error).message}`);
  process.exitCode = 2;
});
