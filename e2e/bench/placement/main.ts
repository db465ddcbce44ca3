/**
 * `pnpm bench placement [--out FILE.json] [--sizes 1000,10000] [--nested 1000] [--reps 10]
 *  [--clients 10] [--claims 300] [--no-peer]`
 *
 * Loads the perfload gate jobs' providers (identical uuids) into cellsched and into the
 * real OpenStack Placement 8.0 on the same PostgreSQL, then per scenario and target:
 * load rate, median/p99 of the perfload query (and with limit=5), requests/s of 10
 * concurrent clients, a claim storm (PUT /allocations, 10 clients), and candidate-set
 * equality of the two targets on the fresh load and after the same claims.
 */
import { writeFileSync } from 'node:fs';
import { Client } from 'pg';
import { compareCandidates, type Comparison } from './compare';
import { FLAT_QUERY, NESTED_QUERY, flatProviders, load, nestedProviders } from './loader';
import { describeMachine } from './machine';
import { claimStorm, concurrentGets, planClaims, timedDistinctGets, timedGets, type Stats } from './measure';
import { printTable } from './report';
import type { ScenarioResult, TargetResult } from './scenario-result';
import { startCellsched, startPeer, type Target } from './targets';

interface Args {
  out?: string;
  sizes: number[];
  nested: number;
  reps: number;
  clients: number;
  claims: number;
  peer: boolean;
  adminUrl: string;
  peerUrl: string;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = {
    sizes: [1000, 10000],
    nested: 1000,
    reps: 10,
    clients: 10,
    claims: 300,
    peer: true,
    adminUrl: 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres',
    peerUrl: 'http://127.0.0.1:18778',
  };
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = [argv[i], argv[i + 1] ?? ''];
    if (k === '--out') a.out = v;
    else if (k === '--sizes') a.sizes = v.split(',').filter(Boolean).map(Number);
    else if (k === '--nested') a.nested = Number(v);
    else if (k === '--reps') a.reps = Number(v);
    else if (k === '--clients') a.clients = Number(v);
    else if (k === '--claims') a.claims = Number(v);
    else if (k === '--admin-url') a.adminUrl = v;
    else if (k === '--peer-url') a.peerUrl = v;
    else if (k === '--no-peer') {
      a.peer = false;
      continue;
    } else throw new Error(`unknown argument ${k}`);
    i++;
  }
  return a;
}

async function runTarget(
  t: Target,
  trees: Parameters<typeof load>[1],
  path: string,
  a: Args,
  concurrentN: number,
  plans: ReturnType<typeof planClaims> | null,
) {
  await t.reset();
  const loadSeconds = await load(t.http, trees, 20);
  const providers = trees.reduce((n, tree) => n + tree.length, 0);
  console.error(`  ${t.name}: loaded ${providers} providers in ${loadSeconds.toFixed(1)} s`);
  await t.http.must('GET', path); // warm-up, not timed
  const fresh = await timedGets(t.http, path, a.reps);
  const uncached = await timedDistinctGets(t.http, path, a.reps);
  const lim = await timedGets(t.http, `${path}&limit=5`, a.reps);
  const conc = await concurrentGets(t.http, path, a.clients, concurrentN);
  const myPlans = plans ?? planClaims(fresh.body, a.claims);
  const storm = await claimStorm(t.http, myPlans, a.clients);
  const after = (await t.http.must('GET', path)).body;
  console.error(
    `  ${t.name}: median ${fresh.stats.median.toFixed(3)} s (distinct queries ${uncached.median.toFixed(3)} s), ${conc.rps.toFixed(2)} req/s, ${storm.cps.toFixed(1)} claims/s`,
  );
  const result: TargetResult = {
    target: t.name,
    load_seconds: loadSeconds,
    providers_per_second: providers / loadSeconds,
    query: fresh.stats,
    query_uncached: uncached,
    query_limit5: lim.stats,
    concurrent_rps: conc.rps,
    concurrent: conc.stats,
    claims_per_second: storm.cps,
    claims_ok: storm.ok,
    claims_conflict: storm.conflicts,
    claim: storm.stats,
    candidates: (JSON.parse(fresh.body) as { allocation_requests: unknown[] }).allocation_requests.length,
    response_bytes: fresh.body.length,
  };
  return { result, fresh: fresh.body, after, plans: myPlans };
}

async function scenario(
  name: string,
  trees: Parameters<typeof load>[1],
  query: string,
  targets: Target[],
  a: Args,
): Promise<ScenarioResult> {
  const path = `/allocation_candidates?${query}`;
  const providers = trees.reduce((n, t) => n + t.length, 0);
  const concurrentN = providers >= 10000 ? 4 * a.clients : 10 * a.clients;
  console.error(`scenario ${name}: ${providers} providers`);
  const out: ScenarioResult = { scenario: name, providers, query, targets: [] };
  const bodies: { fresh: string; after: string }[] = [];
  let plans: ReturnType<typeof planClaims> | null = null;
  for (const t of targets) {
    const r = await runTarget(t, trees, path, a, concurrentN, plans);
    plans = r.plans;
    out.targets.push(r.result);
    bodies.push({ fresh: r.fresh, after: r.after });
  }
  const [x, y] = bodies;
  if (x && y) {
    out.equal_fresh = compareCandidates(x.fresh, y.fresh);
    out.equal_after_claims = compareCandidates(x.after, y.after);
  }
  return out;
}

async function pgVersion(adminUrl: string): Promise<string> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown';
  } finally {
    await c.end();
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const machine = describeMachine(await pgVersion(a.adminUrl).catch(() => 'unknown'));
  const targets: Target[] = [await startCellsched({ adminUrl: a.adminUrl, port: 18880, database: 'cellsched_bench' })];
  if (a.peer) targets.push(await startPeer(a.peerUrl));
  const results: ScenarioResult[] = [];
  try {
    for (const n of a.sizes) results.push(await scenario(`flat ${n}`, flatProviders(n), FLAT_QUERY, targets, a));
    if (a.nested > 0) results.push(await scenario(`nested ${a.nested} trees`, nestedProviders(a.nested), NESTED_QUERY, targets, a));
  } finally {
    for (const t of targets) await t.stop();
  }
  const report = { benchmark: 'placement', date: new Date().toISOString(), machine, settings: a, results };
  printTable(report);
  if (a.out) writeFileSync(a.out, `${JSON.stringify(report, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
