/**
 * A/B of the claim path across migration 007 (server groups): what a claim WITHOUT a group costs
 * PostgreSQL on a database migrated to 006 ("before") and to 007 ("after"), alternating, and what
 * a claim WITH a group costs on "after". Both databases get the same providers and the same claim
 * sequence, through this build's writer (a claim without a group sends the statements it sent
 * before 007). One connection per database, so PostgreSQL's CPU per claim is that backend's own
 * (/proc/<pid>/schedstat, ns), beside the wall time.
 *
 *   pnpm exec tsx services/placement/test/bench/claim-group-ab.ts [--providers 2000] [--claims 400] [--rounds 6]
 *
 * Workloads per round (the same consumers in both databases):
 *   new       lone claims of new consumers (the scheduler's Claim)
 *   batch8    the same in batches of 8 (ClaimMany / group commit)
 *   replace   replace-claims of existing consumers onto another provider (the conductor's reschedule)
 *   g-*       new, batch8 and replace again: on "after" WITH an anti-affinity group per 10 consumers,
 *             on "before" the same claims without (so both databases see the same churn)
 *   release   the gRPC Release of every consumer of the round (deletes them: 007's foreign key cascades)
 */
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, withTransaction, type TestDatabase } from '@cellsched/db';
import {
  claimAllocations,
  writeAllocationsIn,
  type ClaimOptions,
  type ConsumerAllocationsInput,
} from '../../src/adapters/sql/allocation-writer';
import { ClaimBatcher } from '../../src/adapters/sql/claim-batcher';
import type { ClaimGroup } from '../../src/domain/server-group';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const PROVIDERS = arg('providers', 2000);
const CLAIMS = arg('claims', 400);
const ROUNDS = arg('rounds', 6);
const MIGRATIONS = join(__dirname, '..', '..', 'migrations');

const FILL = `
  INSERT INTO resource_providers (uuid, name) SELECT gen_random_uuid(), 'cn' || g FROM generate_series(1, ${PROVIDERS}) g;
  UPDATE resource_providers SET root_provider_id = id;
  INSERT INTO inventories (resource_provider_id, resource_class_id, total, min_unit, max_unit) SELECT id, 0, 4096, 1, 4096 FROM resource_providers;
  INSERT INTO inventories (resource_provider_id, resource_class_id, total, min_unit, max_unit) SELECT id, 1, 1048576, 1, 1048576 FROM resource_providers;
  INSERT INTO inventories (resource_provider_id, resource_class_id, total, min_unit, max_unit) SELECT id, 2, 100000, 1, 100000 FROM resource_providers;
  ANALYZE;`;

interface Side {
  name: string;
  db: TestDatabase;
  providers: string[];
  batcher: ClaimBatcher;
}

/** A database migrated up to `upTo` (a copy of the migrations directory without the later files). */
async function database(name: string, upTo: number): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), 'claim-ab-'));
  cpSync(MIGRATIONS, dir, {
    recursive: true,
    filter: (src) => !/\/(\d{3})_[^/]*\.sql$/.test(src) || Number(/\/(\d{3})_/.exec(src)?.[1]) <= upTo,
  });
  const db = await createTestDatabase({ kind: 'placement', migrationsDir: dir, prefix: `claimab_${name}`, poolMax: 1 });
  rmSync(dir, { recursive: true, force: true });
  await db.pool.query(FILL);
  const providers = (await db.pool.query<{ u: string }>('SELECT uuid::text AS u FROM resource_providers ORDER BY id')).rows.map((r) => r.u);
  return { name, db, providers, batcher: new ClaimBatcher(db.pool) };
}

/** CPU time the backend has used so far (ns). */
const cpuNs = (pid: number): number => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

const input = (consumer: string, provider: string): ConsumerAllocationsInput => ({
  consumerUuid: consumer,
  projectId: 'bench',
  userId: 'bench',
  consumerType: 'INSTANCE',
  allocations: [{ providerUuid: provider, resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 } }],
});

/** One workload's claims: consumer, provider index, group. The same list runs on both sides. */
interface Step {
  consumer: string;
  rp: number;
  group?: ClaimGroup;
}

function steps(n: number, grouped: boolean, round: number): Step[] {
  const groups = Array.from({ length: Math.ceil(n / 10) }, () => randomUUID());
  return Array.from({ length: n }, (_, i) => ({
    consumer: randomUUID(),
    rp: (i * 7919 + round * 104729) % PROVIDERS,
    ...(grouped ? { group: { uuid: groups[Math.floor(i / 10)] as string, policy: 'anti-affinity' as const, maxServerPerHost: 1 } } : {}),
  }));
}

const opts = (s: Step): ClaimOptions => ({ checkConsumerGeneration: false, ...(s.group === undefined ? {} : { group: s.group }) });

async function lone(side: Side, list: readonly Step[], shift = 0): Promise<void> {
  for (const s of list)
    await claimAllocations(side.db.pool, input(s.consumer, side.providers[(s.rp + shift) % PROVIDERS] as string), opts(s));
}

async function batches(side: Side, list: readonly Step[]): Promise<void> {
  for (let i = 0; i < list.length; i += 8) {
    await Promise.all(list.slice(i, i + 8).map((s) => side.batcher.claim(input(s.consumer, side.providers[s.rp] as string), opts(s))));
  }
}

async function release(side: Side, consumers: readonly string[]): Promise<void> {
  for (const c of consumers) {
    await withTransaction(side.db.pool, (db) =>
      writeAllocationsIn(db, [{ consumerUuid: c, allocations: [] }], { checkConsumerGeneration: false }),
    );
  }
}

/** Runs `work` and records PostgreSQL CPU µs and wall µs per claim under `key`. */
async function measure(side: Side, key: string, n: number, work: () => Promise<void>, into: Map<string, number[][]>): Promise<void> {
  // NOTE: the pool's one connection may have been closed while idle (the other side ran): ask which backend serves it now
  const pid = (await side.db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
  const [cpu0, t0] = [cpuNs(pid), performance.now()];
  await work();
  const sample = [(cpuNs(pid) - cpu0) / 1000 / n, ((performance.now() - t0) * 1000) / n];
  into.set(`${side.name} ${key}`, [...(into.get(`${side.name} ${key}`) ?? []), sample]);
}

async function round(side: Side, r: number, into: Map<string, number[][]>): Promise<void> {
  const plain = steps(CLAIMS, false, r);
  const batched = steps(CLAIMS, false, r + 1000);
  await measure(side, 'new', CLAIMS, () => lone(side, plain), into);
  await measure(side, 'batch8', CLAIMS, () => batches(side, batched), into);
  await measure(side, 'replace', CLAIMS, () => lone(side, plain, 1), into);
  // the same claims with an anti-affinity group per 10 consumers on "after", without a group on "before" (the same churn on both)
  const grouped = side.name === 'after';
  const members = steps(CLAIMS, grouped, r + 2000);
  const membersBatched = steps(CLAIMS, grouped, r + 3000);
  await measure(side, 'g-new', CLAIMS, () => lone(side, members), into);
  await measure(side, 'g-batch8', CLAIMS, () => batches(side, membersBatched), into);
  await measure(side, 'g-replace', CLAIMS, () => lone(side, members, 1), into);
  const made = [...plain, ...batched, ...members, ...membersBatched].map((s) => s.consumer);
  await measure(side, 'release', made.length, () => release(side, made), into);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const [before, after] = [await database('before', 6), await database('after', 7)];
  const results = new Map<string, number[][]>();
  const loads: number[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // NOTE: alternate which side goes first, so a drift of the machine's load hits both alike
      for (const side of r % 2 === 0 ? [before, after] : [after, before]) await round(side, r, results);
      loads.push(loadavg()[0] ?? 0);
      process.stderr.write(`round ${r + 1}/${ROUNDS} done (load ${loads.at(-1)?.toFixed(1)})\n`);
    }
  } finally {
    await before.db.drop();
    await after.db.drop();
  }
  console.log(
    `providers ${PROVIDERS}, ${CLAIMS} claims per workload, ${ROUNDS} rounds, load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
  );
  console.log('| workload | PostgreSQL CPU µs/claim (median; each round) | wall µs/claim (median) |');
  console.log('|---|---|---|');
  for (const [key, samples] of [...results].sort(
    ([a], [b]) => (a.split(' ')[1] ?? '').localeCompare(b.split(' ')[1] ?? '') || b.localeCompare(a),
  )) {
    const cpu = samples.map((s) => s[0] as number);
    console.log(
      `| ${key} | ${median(cpu).toFixed(0)} (${cpu.map((x) => x.toFixed(0)).join(', ')}) | ${median(samples.map((s) => s[1] as number)).toFixed(0)} |`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
