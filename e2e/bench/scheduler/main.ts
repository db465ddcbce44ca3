/**
 * `pnpm bench scheduler [--sizes 1000,5000,10000] [--replicas 1,2,4] [--clients 8] [--decisions 3000] [--warmup 1500]
 *  [--max-results 1000] [--subset 1] [--sample N] [--race] [--race-only] [--race-requests 2000] [--race-capacity 1500] [--stages] [--out FILE.json]`
 *
 * Per size: a fresh cloud (placement + API + 2 cells on PostgreSQL, placement as its own process)
 * with N hosts spread over 2 cells, then for each replica count: scheduler replicas as separate
 * processes, `clients` closed-loop clients making `decisions` single-instance SelectDestinations
 * (claim included, 2 alternates): p50/p99 latency and decisions/s. `--race`: 4 replicas and
 * `race-requests` concurrent requests into a cloud that fits `race-capacity` (10 VCPUs per host):
 * exactly that many claims, the rest NoValidHost, nobody over capacity, no consumer twice.
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { placementUsage, uniformHosts } from './seed';
import { BenchCloud } from './cloud';
import { stages, systemCpu } from './stages';
import { type RunStats, type SchedulerClient, clientsFor, closedLoop, decide } from './measure';

interface Args {
  sizes: number[];
  replicas: number[];
  clients: number;
  decisions: number;
  warmup: number;
  maxResults: number;
  subset: number;
  sample?: number;
  race: boolean;
  raceOnly: boolean;
  stages: boolean;
  raceRequests: number;
  raceCapacity: number;
  out?: string;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = {
    sizes: [1000, 5000, 10000],
    replicas: [1, 2, 4],
    clients: 8,
    decisions: 3000,
    warmup: 1500,
    maxResults: 1000,
    subset: 1,
    race: false,
    raceOnly: false,
    stages: false,
    raceRequests: 2000,
    raceCapacity: 1500,
  };
  const list = (v: string): number[] => v.split(',').filter(Boolean).map(Number);
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = [argv[i], argv[i + 1] ?? ''];
    if (k === '--sizes') a.sizes = list(v);
    else if (k === '--replicas') a.replicas = list(v);
    else if (k === '--clients') a.clients = Number(v);
    else if (k === '--decisions') a.decisions = Number(v);
    else if (k === '--warmup') a.warmup = Number(v);
    else if (k === '--max-results') a.maxResults = Number(v);
    else if (k === '--subset') a.subset = Number(v);
    else if (k === '--sample') a.sample = Number(v);
    else if (k === '--race-requests') a.raceRequests = Number(v);
    else if (k === '--race-capacity') a.raceCapacity = Number(v);
    else if (k === '--out') a.out = v;
    else if (k === '--stages') {
      a.stages = true;
      continue;
    } else if (k === '--race') {
      a.race = true;
      continue;
    } else if (k === '--race-only') {
      a.race = true;
      a.raceOnly = true;
      continue;
    } else {
      throw new Error(`unknown argument ${k}`);
    }
    i += 1;
  }
  return a;
}

interface Row extends RunStats {
  hosts: number;
  replicas: number;
  /** 1-minute load average right after the measured loop. */ load1: number;
}

/** CPU time (ms) this process (the load generator) has used so far. */
function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function benchSize(hosts: number, a: Args, env: Record<string, string>): Promise<Row[]> {
  const cloud = await BenchCloud.create();
  const rows: Row[] = [];
  try {
    const t = Date.now();
    await cloud.addHosts(uniformHosts(hosts, 2, { vcpus: 64, memoryMb: 262144, diskGb: 4000 }));
    process.stderr.write(`seeded ${hosts} hosts in ${Date.now() - t} ms\n`);
    for (const n of a.replicas) {
      const clients = clientsFor(await cloud.startReplicas(n, env));
      // NOTE: warm-up long enough for V8 to finish optimizing the hot paths of fresh replica processes and for the
      // connections, caches and placement snapshot to settle: with 200 decisions per replica, TurboFan still took about a
      // quarter of a replica's CPU during the measured loop (perf), so those rows measured JIT warm-up, not the scheduler.
      await closedLoop(clients, a.clients, a.warmup * n, 1_000_000 * n);
      // NOTE: the load generator's own CPU (its gRPC client, mostly) is part of the path too: `client`.
      const cpu0 = { ...(await systemCpu(cloud)), client: ownCpuMs() };
      const stats = await closedLoop(clients, a.clients, a.decisions, 2_000_000 * n);
      const cpu1 = { ...(await systemCpu(cloud)), client: ownCpuMs() };
      const cpuPerDecision = Object.fromEntries(
        Object.entries(cpu1).map(([k, v]) => [k, Number(((v - cpu0[k as keyof typeof cpu0]) / a.decisions).toFixed(2))]),
      );
      rows.push({ hosts, replicas: n, ...stats, cpuPerDecision, load1: Number((loadavg()[0] ?? 0).toFixed(2)) });
      process.stderr.write(
        `${hosts} hosts, ${n} replica(s): p50 ${stats.p50.toFixed(1)} ms, p99 ${stats.p99.toFixed(1)} ms, ${stats.perSecond.toFixed(1)}/s, errors ${stats.errors}, load ${loadavg()[0]?.toFixed(2)}, CPU ms/decision ${JSON.stringify(cpuPerDecision)}\n`,
      );
      clients.forEach((c) => c.close());
      await cloud.stopReplicas();
    }
  } finally {
    await cloud.close();
  }
  return rows;
}

/** `--stages`: per-stage medians at each size (see stages.ts). */
async function stageProbe(hosts: number, a: Args, env: Record<string, string>): Promise<Record<string, number>> {
  const cloud = await BenchCloud.create();
  try {
    await cloud.addHosts(uniformHosts(hosts, 2, { vcpus: 64, memoryMb: 262144, diskGb: 4000 }));
    return { hosts, ...(await stages(cloud, a.maxResults, a.clients, env)) };
  } finally {
    await cloud.close();
  }
}

async function race(a: Args, env: Record<string, string>): Promise<Record<string, number | boolean>> {
  const cloud = await BenchCloud.create();
  try {
    await cloud.addHosts(uniformHosts(a.raceCapacity / 10, 2, { vcpus: 10, memoryMb: 262144, diskGb: 4000 }, 'race'));
    const clients: SchedulerClient[] = clientsFor(await cloud.startReplicas(4, env));
    const consumers: string[] = Array.from({ length: a.raceRequests }, () => randomUUID());
    const started = performance.now();
    const results = await Promise.all(consumers.map((c, i) => decide(clients[i % 4] as SchedulerClient, i + 1, c, 0)));
    const ms = performance.now() - started;
    clients.forEach((c) => c.close());
    const distinct = [...new Set(results.filter((r) => r.kind === 'error').map((r) => (r.error ?? '').slice(0, 300)))];
    for (const e of distinct.slice(0, 5)) process.stderr.write(`race error: ${e}\n`);
    const usage = await placementUsage(cloud.placementDb.pool);
    const ok = new Set(consumers.filter((_, i) => results[i]?.kind === 'ok'));
    const out = {
      requests: a.raceRequests,
      capacity: a.raceCapacity,
      seconds: ms / 1000,
      claims: usage.consumers.size,
      selected: ok.size,
      no_valid_host: results.filter((r) => r.kind === 'no_valid_host').length,
      errors: results.filter((r) => r.kind === 'error').length,
      over_capacity_providers: usage.overCapacity.length,
      consumers_with_two_claims: [...usage.consumers.values()].filter((p) => p.length > 1).length,
      claims_match_answers: usage.consumers.size === ok.size && [...usage.consumers.keys()].every((c) => ok.has(c)),
      conflict_retries: results.reduce((n, r) => n + r.retries, 0),
    };
    return {
      ...out,
      pass:
        out.claims === a.raceCapacity &&
        out.no_valid_host === a.raceRequests - a.raceCapacity &&
        out.errors === 0 &&
        out.over_capacity_providers === 0 &&
        out.consumers_with_two_claims === 0 &&
        out.claims_match_answers,
    };
  } finally {
    await cloud.close();
  }
}

function printTable(rows: readonly Row[]): void {
  console.log(
    '| hosts | replicas | p50 ms | p99 ms | decisions/s | NoValidHost | errors | claim retries | CPU ms/decision: scheduler, placement, PG placement, PG cells+API, bench client | load |',
  );
  console.log('|------:|---------:|-------:|-------:|------------:|------------:|-------:|--------------:|:---|---:|');
  for (const r of rows) {
    const c = r.cpuPerDecision ?? {};
    console.log(
      `| ${r.hosts} | ${r.replicas} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.perSecond.toFixed(1)} | ${r.noValidHost} | ${r.errors} | ${r.claimRetries} | ${[c.scheduler, c.placement, c.pgPlacement, c.pgCells, c.client].join(' / ')} | ${r.load1} |`,
    );
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const env: Record<string, string> = {
    CELLSCHED_SCHEDULER_MAX_PLACEMENT_RESULTS: String(a.maxResults),
    CELLSCHED_SCHEDULER_HOST_SUBSET_SIZE: String(a.subset),
    ...(a.sample === undefined ? {} : { CELLSCHED_SCHEDULER_HOST_SAMPLE_SIZE: String(a.sample) }),
  };
  const machine = {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? '?',
    load_average_at_start: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
  };
  console.log(
    `machine: ${JSON.stringify(machine)}; clients ${a.clients}, decisions ${a.decisions} after ${a.warmup} per replica to warm up, max_placement_results ${a.maxResults}, host_subset_size ${a.subset}, host_sample_size ${a.sample ?? 'default'}`,
  );
  const rows: Row[] = [];
  if (a.stages) {
    const probes = [];
    for (const size of a.sizes) probes.push(await stageProbe(size, a, env));
    console.log(`stages: ${JSON.stringify(probes)}`);
    return;
  }
  if (!a.raceOnly) for (const size of a.sizes) rows.push(...(await benchSize(size, a, env)));
  if (rows.length > 0) printTable(rows);
  const raceResult = a.race ? await race(a, env) : undefined;
  if (raceResult !== undefined) console.log(`race: ${JSON.stringify(raceResult)}`);
  if (a.out !== undefined) writeFileSync(a.out, JSON.stringify({ machine, args: a, rows, race: raceResult }, null, 2));
  if (raceResult !== undefined && raceResult.pass !== true) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
