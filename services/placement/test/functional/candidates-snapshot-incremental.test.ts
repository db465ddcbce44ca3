/**
 * The incremental candidates snapshot against a real PostgreSQL: another pool (another
 * placement process, a direct SQL writer) writes; after each write the cached snapshot
 * must equal an uncached load, taken incrementally when only providers changed, fully
 * after a TRUNCATE or when the change log was pruned past the cache's xmin; writers
 * committing out of order are never missed; rendered answers equal the uncached ones.
 */
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '@cellsched/db';
import { Pool } from 'pg';
import { ProviderSummaries, resultToResponse } from '../../src/adapters/grpc/candidates-mapping';
import { writeAllocations } from '../../src/adapters/sql/allocation-writer';
import { CandidateSnapshotCache, loadCandidateSnapshot } from '../../src/adapters/sql/candidates-snapshot';
import { parseCandidateQuery } from '../../src/domain/candidates/query-parser';
import { renderCandidatesJson, RenderMemos } from '../../src/domain/candidates/render-json';
import { findAllocationCandidates } from '../../src/domain/candidates/search';
import type { CandidateSnapshot } from '../../src/domain/candidates/types';
import { placementTestDatabase, ProviderBuilder, type ProviderRef } from './candidates-fixture';

let db: TestDatabase;
let writer: Pool;
let b: ProviderBuilder;
let cache: CandidateSnapshotCache;
let cn1: ProviderRef;
let cn2: ProviderRef;

const AGG = '0b8c3a4e-3f5e-4d59-9d7a-5c1f3e0d2a11';

/** Everything a snapshot holds, as plain comparable data. */
function plain(s: CandidateSnapshot): unknown {
  const sorted = <K, V>(m: ReadonlyMap<K, V>): [K, V][] => [...m].sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  return {
    providers: [...s.providers.values()].map((p) => ({
      id: p.id,
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      parentId: p.parentId,
      rootId: p.rootId,
      traits: [...p.traits],
      aggregates: [...p.aggregates],
      inventories: [...p.inventories],
    })),
    keys: [...s.providers.keys()],
    size: s.providers.size,
    byUuid: sorted(s.providerIdByUuid),
    rc: [sorted(s.resourceClassIdByName), sorted(s.resourceClassNameById)],
    traits: [sorted(s.traitIdByName), sorted(s.traitNameById)],
    aggs: [sorted(s.aggregateIdByUuid), sorted(s.aggregateUuidById)],
    hasTrees: s.hasTrees,
    treeNodes: s.treeNodes,
  };
}

const QUERIES = [
  'resources=VCPU:1',
  'resources=VCPU:1,MEMORY_MB:512&required=CUSTOM_FAST',
  'resources=VCPU:1&limit=2',
  `resources=VCPU:1&member_of=${AGG}`,
];

// NOTE: one set of memos for every snapshot, as a running placement has: successive snapshots
// share name tables and nodes, so this also checks that a memo made on one is right on the next.
const memos = new RenderMemos();
const summaries = new ProviderSummaries();

/** The rendered answers (JSON at 1.39 and 1.17, gRPC) of QUERIES on a snapshot. */
function answers(s: CandidateSnapshot): unknown[] {
  return QUERIES.flatMap((q) =>
    [39, 17].map((minor) => {
      try {
        const { groups, params } = parseCandidateQuery([...new URLSearchParams(q)], minor);
        const result = findAllocationCandidates(s, groups, params);
        const json = renderCandidatesJson(s, result, minor, new Set(groups.flatMap((g) => [...g.resources.keys()])), memos);
        return [json, resultToResponse(s, result, summaries)];
      } catch (err) {
        return (err as Error).message;
      }
    }),
  );
}

/** The cache's snapshot equals an uncached load, and answers the same; returns it. */
async function expectFresh(kind: 'full' | 'incremental' | 'unchanged'): Promise<CandidateSnapshot> {
  const cached = await cache.get();
  expect(cache.lastRefresh).toBe(kind);
  const direct = await loadCandidateSnapshot(db.pool);
  expect(plain(cached)).toEqual(plain(direct));
  expect(answers(cached)).toEqual(answers(direct));
  return cached;
}

async function claim(rp: ProviderRef, vcpu: number, consumer = randomUUID()): Promise<string> {
  await writeAllocations(
    writer,
    [{ consumerUuid: consumer, projectId: 'p', userId: 'u', allocations: [{ providerUuid: rp.uuid, resources: { VCPU: vcpu } }] }],
    { checkConsumerGeneration: false },
  );
  return consumer;
}

beforeAll(async () => {
  db = await placementTestDatabase('cand_incr');
  writer = new Pool({ connectionString: db.url, max: 4 });
  b = new ProviderBuilder(writer);
});
afterAll(async () => {
  await writer.end();
  await db.drop();
});
beforeEach(async () => {
  await b.clear();
  // NOTE: the log's horizon as a fresh database has it: a test that prunes moves it up, and a
  // later cache whose xmin a foreign transaction (another suite in this cluster) holds below it
  // would reload fully on every check.
  await writer.query(`UPDATE candidate_changes_horizon SET pruned_below = '0'`);
  cn1 = await b.provider('cn1', {
    inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 } },
    traits: ['HW_CPU_X86_AVX2'],
    aggregates: [AGG],
  });
  cn2 = await b.provider('cn2', { inventories: { VCPU: { total: 4 } } });
  await b.provider('cn3', { inventories: { VCPU: { total: 2 } } });
  cache = new CandidateSnapshotCache(db.pool);
  await expectFresh('full');
});

test('nothing written: the same snapshot object, one cheap check', async () => {
  const first = await cache.get();
  const again = await expectFresh('unchanged');
  expect(again).toBe(first);
});

test('a claim by another pool reloads only the claimed provider; the others are shared', async () => {
  const before = await cache.get();
  await claim(cn1, 3);
  const after = await expectFresh('incremental');
  expect(after).not.toBe(before);
  expect(after.providers.get(cn1.id)?.inventories.get(0)?.used).toBe(3);
  expect(after.providers.get(cn1.id)?.generation).toBe((before.providers.get(cn1.id)?.generation ?? 0) + 1);
  expect(after.providers.get(cn2.id)).toBe(before.providers.get(cn2.id));
  expect(after.resourceClassNameById).toBe(before.resourceClassNameById);
});

test('inventory, trait, aggregate changes, a provider deleted, a new child in a tree: each exact', async () => {
  await writer.query('UPDATE inventories SET total = 16, reserved = 1 WHERE resource_provider_id = $1 AND resource_class_id = 0', [cn2.id]);
  expect((await expectFresh('incremental')).providers.get(cn2.id)?.inventories.get(0)?.total).toBe(16);

  await writer.query("INSERT INTO traits (name) VALUES ('CUSTOM_FAST')");
  await writer.query("INSERT INTO resource_provider_traits SELECT $1, id FROM traits WHERE name = 'CUSTOM_FAST'", [cn2.id]);
  const withTrait = await expectFresh('incremental');
  expect(withTrait.traitIdByName.has('CUSTOM_FAST')).toBe(true);

  await writer.query('DELETE FROM resource_provider_aggregates WHERE resource_provider_id = $1', [cn1.id]);
  await writer.query('INSERT INTO resource_provider_aggregates SELECT $1, id FROM placement_aggregates', [cn2.id]);
  await expectFresh('incremental');

  const child = await b.provider('cn2-numa0', {
    parent: cn2,
    inventories: { VCPU: { total: 2 }, MEMORY_MB: { total: 1024 } },
    traits: ['CUSTOM_FAST'],
  });
  const tree = await expectFresh('incremental');
  expect(tree.hasTrees).toBe(true);
  expect(tree.providers.get(child.id)?.rootId).toBe(cn2.id);
  expect(tree.providerIdByUuid.get(child.uuid)).toBe(child.id);

  await writer.query('DELETE FROM inventories WHERE resource_provider_id = $1', [child.id]);
  await writer.query('DELETE FROM resource_provider_traits WHERE resource_provider_id = $1', [child.id]);
  await writer.query('DELETE FROM resource_providers WHERE id = $1', [child.id]);
  const gone = await expectFresh('incremental');
  expect(gone.providers.has(child.id)).toBe(false);
  expect(gone.providerIdByUuid.has(child.uuid)).toBe(false);
  expect(gone.hasTrees).toBe(false);
});

test('a renamed resource class and a new unused trait: the name tables follow', async () => {
  await writer.query("INSERT INTO resource_classes (name) VALUES ('CUSTOM_OLD')");
  await expectFresh('incremental');
  await writer.query("UPDATE resource_classes SET name = 'CUSTOM_NEW' WHERE name = 'CUSTOM_OLD'");
  const renamed = await expectFresh('incremental');
  expect(renamed.resourceClassIdByName.has('CUSTOM_NEW')).toBe(true);
  expect(renamed.resourceClassIdByName.has('CUSTOM_OLD')).toBe(false);
});

test('two writers committing out of order: the earlier transaction, committed last, is not missed', async () => {
  const t1 = await writer.connect();
  const t2 = await writer.connect();
  try {
    await t1.query('BEGIN');
    await t1.query('INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES ($1, $2, 0, 5)', [
      cn1.id,
      randomUUID(),
    ]);
    await t2.query('BEGIN');
    await t2.query('INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES ($1, $2, 0, 1)', [
      cn2.id,
      randomUUID(),
    ]);
    const [x1, x2] = await Promise.all(
      [t1, t2].map(async (c) => (await c.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x')).rows[0]?.x),
    );
    expect(BigInt(x1 as string)).toBeLessThan(BigInt(x2 as string));
    await t2.query('COMMIT');
    const mid = await expectFresh('incremental');
    expect(mid.providers.get(cn1.id)?.inventories.get(0)?.used).toBe(0);
    expect(mid.providers.get(cn2.id)?.inventories.get(0)?.used).toBe(1);
    await t1.query('COMMIT');
    const last = await expectFresh('incremental');
    expect(last.providers.get(cn1.id)?.inventories.get(0)?.used).toBe(5);
  } finally {
    t1.release();
    t2.release();
  }
});

test('a TRUNCATE reloads everything (ids restart: nothing of the old snapshot survives)', async () => {
  const before = await cache.get();
  await b.clear();
  const again = await b.provider('again', { inventories: { VCPU: { total: 1 } } });
  expect(again.id).toBe(cn1.id);
  const after = await expectFresh('full');
  expect(after.providers.size).toBe(1);
  expect(after.providers.get(again.id)).not.toBe(before.providers.get(cn1.id));
});

test('a provider uuid changed behind placement reloads everything', async () => {
  await writer.query('UPDATE resource_providers SET uuid = $2 WHERE id = $1', [cn2.id, randomUUID()]);
  await expectFresh('full');
});

test('pruning keeps what a current cache needs; a cache older than the pruned log reloads fully', async () => {
  await claim(cn1, 1);
  await cache.get();
  await cache.pruneNow();
  const below = await writer.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM candidate_changes, candidate_changes_horizon WHERE xid < pruned_below',
  );
  expect(below.rows[0]?.n).toBe(0);
  await claim(cn2, 1);
  await expectFresh('incremental');
  // NOTE: the claim's log rows are pruned before the cache read them: pruned below every
  // transaction so far (xids are cluster-wide: another session's open transaction may
  // hold a snapshot's xmin back, never xmax).
  await claim(cn1, 2);
  await writer.query(`WITH x AS (SELECT pg_snapshot_xmax(pg_current_snapshot()) AS b),
    d AS (DELETE FROM candidate_changes WHERE xid < (SELECT b FROM x))
    UPDATE candidate_changes_horizon SET pruned_below = (SELECT b FROM x)`);
  await expectFresh('full');
  await claim(cn2, 1);
  await expectFresh((await logReaches()) ? 'incremental' : 'full');
});

/**
 * Whether the log still covers the cache (false only when a foreign transaction held
 * the cluster's xmin back during the cache's last load).
 */
async function logReaches(): Promise<boolean> {
  const r = await writer.query<{ ok: boolean }>('SELECT pruned_below <= $1::xid8 AS ok FROM candidate_changes_horizon', [cache.xmin]);
  return r.rows[0]?.ok ?? false;
}

test('concurrent gets share refreshes and all see a write committed before they started', async () => {
  await cache.get();
  await claim(cn1, 2);
  const before = { ...cache.refreshes };
  const all = await Promise.all(Array.from({ length: 8 }, () => cache.get()));
  for (const s of all) expect(s.providers.get(cn1.id)?.inventories.get(0)?.used).toBe(2);
  const total = (r: Record<string, number>): number => Object.values(r).reduce((x, y) => x + y, 0);
  expect(total(cache.refreshes) - total(before)).toBeLessThanOrEqual(2);
});

test('a stream of claims and releases stays exact', async () => {
  const held: string[] = [];
  for (let i = 0; i < 12; i++) {
    if (i % 3 === 2) {
      await writeAllocations(writer, [{ consumerUuid: held.shift() as string, allocations: [] }], { checkConsumerGeneration: false });
    } else {
      held.push(await claim(i % 2 === 0 ? cn1 : cn2, 1));
    }
    await expectFresh('incremental');
  }
});
