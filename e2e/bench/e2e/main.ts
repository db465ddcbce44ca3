/**
 * `pnpm bench e2e [--hosts 1000,5000,10000] [--cells 2] [--schedulers 2] [--build-latency-ms 200]
 *  [--clients 64] [--phase-s 30] [--start-rate 40] [--rate-step 20] [--max-rate 400] [--step-s 20]
 *  [--sustain-s 300] [--sustain-rate R] [--p99-bound-ms 2000] [--failure-rate 0.2] [--no-tracing-off] [--no-counts | --counts-only] [--no-invariants]
 *  [--phases closed,multi,failures,ramp,sustained] [--cpu-prof DIR] [--pg-statements FILE] [--port-offset 6200] [--out FILE.json]`
 *
 * The whole pipeline, POST /servers to ACTIVE, on a system `pnpm stack up` starts (2 cells, the
 * hosts split between them, tracing exported as the launcher ships it: the story sampler to the
 * span file). Per host count:
 *   closed loop: `clients` clients each sending single creates, `phase-s` seconds;
 *   multi-create: clients/16 clients sending min_count = max_count = 10 (2,000 servers at most);
 *   with failures: the closed loop again with `failure-rate` of builds failing (rescheduled);
 *   ramp: an open loop at a rising rate (`start-rate`, + `rate-step` every `step-s`) until a step
 *     no longer holds (ACTIVE/s below 95% of the offered rate, a backlog left, or p99 over the bound);
 *   sustained: the highest rate that held, for `sustain-s`; then every chaos invariant is checked;
 *   tracing off: the system again without spans, the closed loop and the sustained phase's rate (1 min at most).
 * Once per run: the machine's ceilings (pgbench commits/s, RabbitMQ persistent confirmed
 * publishes/s) and, on the first host count, the round trips and messages of one create, counted
 * in its trace (a system started with database spans, 200 creates).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Ledger, ComputeFaults } from '../../chaos/context';
import { checkInvariants } from '../../chaos/invariants';
import { Monitor } from '../../chaos/monitor';
import { ChaosStack, ROOT } from '../../chaos/stack';
import { describeMachine } from '../placement/machine';
import {
  countCreates,
  cpuNow,
  cpuPerBuild,
  machineCpuNow,
  pgbenchCeiling,
  pgCommits,
  pgStatements,
  rabbitCeiling,
  type CreateCounts,
} from './costs';
import { closedLoop, openLoop, phase, round1, Tracker, type PhaseResult } from './load';
import { renderReport, type HostRun, type Report } from './report';

const { values: o } = parseArgs({
  options: {
    hosts: { type: 'string', default: '1000,5000,10000' },
    cells: { type: 'string', default: '2' },
    schedulers: { type: 'string', default: '2' },
    'build-latency-ms': { type: 'string', default: '200' },
    clients: { type: 'string', default: '64' },
    'phase-s': { type: 'string', default: '30' },
    'start-rate': { type: 'string', default: '40' },
    'rate-step': { type: 'string', default: '20' },
    'max-rate': { type: 'string', default: '400' },
    'step-s': { type: 'string', default: '20' },
    'sustain-s': { type: 'string', default: '300' },
    'p99-bound-ms': { type: 'string', default: '2000' },
    // the sustained phase at this rate, held by the ramp or not (an A/B of one rate); default: the highest that held
    'sustain-rate': { type: 'string' },
    'failure-rate': { type: 'string', default: '0.2' },
    'no-tracing-off': { type: 'boolean', default: false },
    'no-counts': { type: 'boolean', default: false },
    // A/B runs of one phase: skip the chaos checker after the load (~5 min at 10,000 hosts); reported as 'not checked'
    'no-invariants': { type: 'boolean', default: false },
    'counts-only': { type: 'boolean', default: false },
    'port-offset': { type: 'string', default: '6200' },
    out: { type: 'string' },
    phases: { type: 'string', default: 'closed,multi,failures,ramp,sustained' },
    'cpu-prof': { type: 'string' },
    'pg-statements': { type: 'string' },
  },
});
const N = (k: keyof typeof o): number => Number(o[k]);
if (o['sustain-rate'] !== undefined && !(N('sustain-rate') > 0))
  throw new Error(`--sustain-rate: a rate above 0, got ${o['sustain-rate']}`);
const PHASES = new Set((o.phases ?? '').split(',').filter(Boolean));
for (const p of PHASES)
  if (!['closed', 'multi', 'failures', 'ramp', 'sustained'].includes(p)) throw new Error(`--phases: unknown phase ${p}`);
const PREFIX = 'benche2e';
const ADMIN_URL = process.env.CELLSCHED_PG_ADMIN_URL ?? 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres';
const AMQP_URL = process.env.CELLSCHED_AMQP_BASE_URL ?? 'amqp://127.0.0.1:5672/';
const log = (m: string): void => {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
};

/** A system of `hosts` hosts, started fresh (its previous run purged); `env` reaches every process. */
function up(hosts: number, env: Record<string, string>): ChaosStack {
  const stateDir = join(tmpdir(), `cellsched-bench-e2e-${N('port-offset')}`);
  const cells = N('cells');
  const stack = new ChaosStack(
    PREFIX,
    N('port-offset'),
    { cells, hostsPerCell: Math.ceil(hosts / cells), schedulers: N('schedulers'), buildLatencyMs: N('build-latency-ms') },
    stateDir,
  );
  const flags = ['--state-dir', stateDir, '--prefix', PREFIX, '--port-offset', String(N('port-offset'))];
  execFileSync('node', ['scripts/stack.mjs', 'down', '--purge', ...flags], { cwd: ROOT, stdio: 'ignore', timeout: 300_000 });
  for (const f of readdirSync(stateDir)) rmSync(join(stateDir, f), { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  execFileSync(
    'node',
    [
      'scripts/stack.mjs',
      'up',
      ...flags,
      '--cells',
      String(cells),
      '--hosts-per-cell',
      String(Math.ceil(hosts / cells)),
      '--schedulers',
      o.schedulers ?? '2',
      '--build-latency-ms',
      o['build-latency-ms'] ?? '200',
      '--build-failure-rate',
      '0',
    ],
    // NOTE: the cell conductors' allocation audit every 20 s (default 5 min), so the chaos checker's `audit` invariant sees a pass after quiescence
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 900_000,
      env: {
        ...process.env,
        CELLSCHED_SCHEDULER_DECISION_LOG_INTERVAL_MS: '1000',
        CELLSCHED_AUDIT_INTERVAL_MS: '20000',
        // --cpu-prof: every service writes a V8 CPU profile to DIR when `stack down` stops it
        ...(o['cpu-prof'] === undefined ? {} : { CELLSCHED_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${o['cpu-prof']}` }),
        ...env,
      },
    },
  );
  return stack;
}

function down(stack: ChaosStack): void {
  execFileSync(
    'node',
    ['scripts/stack.mjs', 'down', '--purge', '--state-dir', stack.stateDir, '--prefix', PREFIX, '--port-offset', String(N('port-offset'))],
    { cwd: ROOT, stdio: 'ignore', timeout: 300_000 },
  );
}

function cellDbUrls(stack: ChaosStack): string[] {
  return ['cell0', ...stack.topology().cells.map((c) => c.name)].map((c) => stack.adminUrl(`${PREFIX}_${c}`));
}

/** The schedulers' claim conflict retries so far (their "scheduler decisions" totals). */
function claimRetries(stack: ChaosStack): number {
  let n = 0;
  for (const s of stack.servicesOf('scheduler')) {
    const last = stack
      .logSince(s, 0)
      .reverse()
      .find((l) => l.includes('"scheduler decisions"'));
    n += last === undefined ? 0 : Number((JSON.parse(last) as { totals: { claim_retries: number } }).totals.claim_retries);
  }
  return n;
}

/**
 * Why the servers that went to ERROR since `since` did, by fault message (cell0, where Nova buries
 * a NoValidHost, and each cell), most frequent first: a phase that fills the cloud says so.
 */
async function errorReasons(stack: ChaosStack, since: Date): Promise<Record<string, number>> {
  const counts = new Map<string, number>();
  for (const c of ['cell0', ...stack.topology().cells.map((x) => x.name)]) {
    const rows = await stack.query<{ message: string; n: string }>(
      stack.adminUrl(`${PREFIX}_${c}`),
      `SELECT f.message, count(DISTINCT f.instance_uuid) AS n FROM instance_faults f JOIN instances i ON i.uuid = f.instance_uuid
        WHERE i.vm_state = 'error' AND f.created_at >= $1 GROUP BY f.message`,
      [since],
    );
    for (const r of rows) {
      // NOTE: Nova's messages name the instance ("... for instance <uuid>"): one reason, whichever server
      const message = r.message.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>').slice(0, 120);
      counts.set(message, (counts.get(message) ?? 0) + Number(r.n));
    }
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, 5));
}

/** Instances of this run that took more than one build attempt, over those with any (the cells' action events). */
async function rescheduleShare(stack: ChaosStack, since: Date): Promise<{ servers: number; rescheduled: number; share: number }> {
  let servers = 0;
  let rescheduled = 0;
  for (const c of stack.topology().cells) {
    const rows = await stack.query<{ attempts: string }>(
      stack.adminUrl(`${PREFIX}_${c.name}`),
      `
      SELECT count(*) AS attempts FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
      WHERE e.event = 'compute__do_build_and_run_instance' AND a.created_at >= $1 GROUP BY a.instance_uuid`,
      [since],
    );
    servers += rows.length;
    rescheduled += rows.filter((r) => Number(r.attempts) > 1).length;
  }
  return { servers, rescheduled, share: servers === 0 ? 0 : round1((1000 * rescheduled) / servers) / 10 };
}

interface Measured extends PhaseResult {
  cpuMsPerBuild: Record<string, number>;
  /** Share of the machine's CPU time (every core) that was busy during the phase, in %. */
  machineBusyPct: number;
  commitsPerBuild: number;
  claimRetries: number;
  reschedules: { servers: number; rescheduled: number; share: number };
  /** The ERROR servers' fault messages (the 5 most frequent) and how many servers each. */
  errorReasons: Record<string, number>;
}

/** Waits (bounded) until the system is at rest: no build request in the API DB, no instance building or with a task in a cell. */
async function idle(stack: ChaosStack, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let busy = Number(
      (await stack.query<{ n: string }>(stack.adminUrl(`${PREFIX}_api`), 'SELECT count(*) AS n FROM build_requests'))[0]?.n ?? 0,
    );
    for (const c of stack.topology().cells) {
      busy += Number(
        (
          await stack.query<{ n: string }>(
            stack.adminUrl(`${PREFIX}_${c.name}`),
            "SELECT count(*) AS n FROM instances WHERE deleted_at IS NULL AND (vm_state = 'building' OR task_state IS NOT NULL)",
          )
        )[0]?.n ?? 0,
      );
    }
    if (busy === 0) return;
    if (Date.now() > deadline) {
      log(`still ${busy} builds in flight after ${timeoutMs / 1000} s: going on`);
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A phase with its costs, begun on a system at rest: CPU per process and commits per build, claim retries, reschedules. */
async function measured(
  stack: ChaosStack,
  tracker: Tracker,
  name: string,
  drainMs: number,
  drive: Parameters<typeof phase>[4],
): Promise<Measured> {
  await idle(stack);
  const since = new Date();
  const [cpu0, commits0, retries0, machine0] = [
    cpuNow(stack.stateDir),
    await pgCommits(ADMIN_URL, PREFIX),
    claimRetries(stack),
    machineCpuNow(),
  ];
  const r = await phase(name, stack.apiUrl, tracker, drainMs, drive);
  const [cpu1, commits1, machine1] = [cpuNow(stack.stateDir), await pgCommits(ADMIN_URL, PREFIX), machineCpuNow()];
  await new Promise((res) => setTimeout(res, 1100)); // the schedulers' next decision line
  const m = {
    ...r,
    cpuMsPerBuild: cpuPerBuild(cpu0, cpu1, r.active + r.error),
    machineBusyPct: Math.round(((machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total)) * 1000) / 10,
    commitsPerBuild: round1((commits1 - commits0) / Math.max(1, r.active + r.error)),
    claimRetries: claimRetries(stack) - retries0,
    reschedules: await rescheduleShare(stack, since),
    errorReasons: r.error > 0 ? await errorReasons(stack, since) : {},
  };
  log(
    `${name}: ${r.accepted} accepted (${r.acceptedPerS}/s), ${r.active} ACTIVE (${r.activePerS}/s in the window), ${r.error} ERROR, ${r.unfinished} unfinished; ` +
      `p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, max ${r.maxMs} ms; CPU ${m.cpuMsPerBuild['total (without the load generator)']} ms/build, machine ${m.machineBusyPct}% busy; ${m.commitsPerBuild} commits/build; ` +
      `${m.claimRetries} claim retries; rescheduled ${m.reschedules.share}%` +
      (r.error > 0 ? `; ERROR because: ${JSON.stringify(m.errorReasons)}` : ''),
  );
  return m;
}

/** Whether a ramp step held: nearly all it offered became ACTIVE inside the window, nothing left over, p99 within the bound. */
const held = (r: PhaseResult, rate: number): boolean =>
  r.activePerS >= 0.95 * rate && r.unfinished === 0 && r.error === 0 && r.p99Ms <= N('p99-bound-ms') && r.lagged === 0;

async function runHosts(hosts: number): Promise<HostRun> {
  log(`${hosts} hosts: starting the system`);
  let t = Date.now();
  let stack = up(hosts, {});
  log(`up in ${Math.round((Date.now() - t) / 1000)} s`);
  let tracker = new Tracker(cellDbUrls(stack));
  tracker.start();
  const ledger = new Ledger();
  const monitor = new Monitor(stack);
  // NOTE: every 10 s, not the chaos suite's 2 s: its capacity check scans every allocation in
  // placement and its broker check runs rabbitmqctl, a load of the bench's own that the CPU per
  // build counts as PostgreSQL's and RabbitMQ's (at 10,000 hosts ~1.3 s of the 35 s of statement
  // time of a closed-loop window). The checker still samples once more at quiescence.
  monitor.start(10_000);
  const started = Date.now();
  const logsFrom = stack.logOffsets();
  const clients = N('clients');
  const phaseS = N('phase-s');
  const drain = 60_000;
  const phases: Measured[] = [];
  await phase('warmup', stack.apiUrl, tracker, drain, (c) => closedLoop(c, 16, 10));
  // --pg-statements FILE: PostgreSQL's per-statement account of the load phases (pg_stat_statements)
  if (o['pg-statements'] !== undefined) await pgStatements(ADMIN_URL, 'reset');
  if (PHASES.has('closed')) phases.push(await measured(stack, tracker, 'closed', drain, (c) => closedLoop(c, clients, phaseS)));
  if (PHASES.has('multi'))
    phases.push(
      await measured(stack, tracker, 'multi-create x10', drain, (c) => closedLoop(c, Math.max(1, clients / 16), phaseS, 10, 2000)),
    );
  if (PHASES.has('failures')) {
    const faults = new ComputeFaults(stack);
    await faults.set('all', { failRate: N('failure-rate') });
    phases.push(
      await measured(stack, tracker, `closed, ${N('failure-rate') * 100}% builds failing`, drain, (c) => closedLoop(c, clients, phaseS)),
    );
    await faults.set('all', { failRate: 0 });
  }
  const ramp: Measured[] = [];
  let best = 0;
  for (let rate = N('start-rate'); PHASES.has('ramp') && rate <= N('max-rate'); rate += N('rate-step')) {
    const r = await measured(stack, tracker, `open ${rate}/s`, 15_000, (c) => openLoop(c, rate, N('step-s')));
    ramp.push(r);
    if (!held(r, rate)) break;
    best = rate;
  }
  let sustained: Measured | undefined;
  const sustainRate = o['sustain-rate'] === undefined ? best : N('sustain-rate');
  if (sustainRate > 0 && PHASES.has('sustained'))
    sustained = await measured(stack, tracker, `sustained ${sustainRate}/s`, 60_000, (c) => openLoop(c, sustainRate, N('sustain-s')));
  await tracker.close();
  await monitor.stop();
  if (o['pg-statements'] !== undefined) {
    writeFileSync(`${o['pg-statements']}.${hosts}.md`, await pgStatements(ADMIN_URL, 'report'));
    log(`statements: ${o['pg-statements']}.${hosts}.md`);
  }
  for (const id of await liveIds(stack)) ledger.accept(id);
  let invariants: Record<string, string> = { all: 'not checked (--no-invariants)' };
  if (!o['no-invariants']) {
    log('checking every chaos invariant');
    const check = await checkInvariants(stack, ledger, monitor, { settleMs: 120_000, logsFrom, since: started });
    invariants = Object.fromEntries(
      check.results.map((r) => [r.name, r.problems.length === 0 ? 'pass' : `FAIL: ${r.problems.slice(0, 3).join(' | ')}`]),
    );
  }
  log(
    `invariants: ${Object.entries(invariants)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  const tracingOff: Measured[] = [];
  if (!o['no-tracing-off']) {
    down(stack);
    log(`${hosts} hosts: again without tracing`);
    t = Date.now();
    stack = up(hosts, { CELLSCHED_TELEMETRY_EXPORTER: 'none' });
    log(`up in ${Math.round((Date.now() - t) / 1000)} s`);
    tracker = new Tracker(cellDbUrls(stack));
    tracker.start();
    await phase('warmup', stack.apiUrl, tracker, drain, (c) => closedLoop(c, 16, 10));
    tracingOff.push(await measured(stack, tracker, 'closed, tracing off', drain, (c) => closedLoop(c, clients, phaseS)));
    // NOTE: the rate the sustained phase ran at: the highest that held, or --sustain-rate
    if (sustainRate > 0 && PHASES.has('sustained'))
      tracingOff.push(
        await measured(stack, tracker, `sustained ${sustainRate}/s, tracing off`, 60_000, (c) =>
          openLoop(c, sustainRate, Math.min(60, N('sustain-s'))),
        ),
      );
    await tracker.close();
  }
  down(stack);
  return { hosts, phases, ramp, best, sustained, invariants, tracingOff };
}

/** Every live instance uuid of the system (its cells and cell0). */
async function liveIds(stack: ChaosStack): Promise<string[]> {
  const ids: string[] = [];
  for (const url of cellDbUrls(stack))
    ids.push(...(await stack.query<{ uuid: string }>(url, 'SELECT uuid::text FROM instances WHERE deleted_at IS NULL')).map((r) => r.uuid));
  return ids;
}

/** Round trips, messages and calls of one create, counted in 200 creates' traces on a system with database spans. */
async function counts(hosts: number): Promise<CreateCounts> {
  log("counting one create's round trips and messages (database spans on)");
  const stack = up(hosts, { CELLSCHED_TELEMETRY_DB_SPANS_PER_TRACE: '100000' });
  const tracker = new Tracker(cellDbUrls(stack));
  tracker.start();
  let sent = 0;
  await phase('counts', stack.apiUrl, tracker, 60_000, async (c) => {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent++ < 200) await c.create();
      }),
    );
    return { lagged: 0 };
  });
  await tracker.close();
  await new Promise((r) => setTimeout(r, 6000)); // the batch exporters' last flush
  const files = readdirSync(stack.stateDir)
    .filter((f) => /^spans.*\.jsonl$/.test(f))
    .map((f) => join(stack.stateDir, f));
  const c = countCreates(files);
  down(stack);
  log(`per create: ${JSON.stringify(c)}`);
  return c;
}

async function main(): Promise<void> {
  const hostCounts = (o.hosts ?? '').split(',').filter(Boolean).map(Number);
  const pg = execFileSync('psql', [ADMIN_URL, '-Atc', 'SHOW server_version'], { encoding: 'utf8' }).trim();
  const machine = {
    ...describeMachine(pg),
    rabbitmq: execFileSync('sh', ['-c', "dpkg-query -W -f='${Version}' rabbitmq-server 2>/dev/null || echo unknown"], {
      encoding: 'utf8',
    }).trim(),
  };
  log(
    `machine: ${cpus().length} cores, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  log('ceilings: pgbench (16 clients, BEGIN; INSERT; COMMIT) and RabbitMQ (persistent, confirmed, quorum queue, a consumer acking)');
  const ceilings = { pgCommitsPerS: await pgbenchCeiling(ADMIN_URL), rabbitPublishesPerS: await rabbitCeiling(AMQP_URL) };
  log(`ceilings: ${ceilings.pgCommitsPerS} commits/s, ${ceilings.rabbitPublishesPerS} publishes/s`);
  const perCreate = o['no-counts'] ? undefined : await counts(hostCounts[0] ?? 1000);
  const runs: HostRun[] = [];
  if (!o['counts-only']) for (const h of hostCounts) runs.push(await runHosts(h));
  const report: Report = {
    at: new Date().toISOString(),
    machine,
    options: o,
    ceilings,
    perCreate,
    runs,
    loadAverageAtEnd: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
  };
  const out = o.out ?? join(ROOT, 'e2e/bench/e2e/results', `run-${report.at.slice(0, 19).replace(/[:T]/g, '')}.json`);
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(renderReport(report, out));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
