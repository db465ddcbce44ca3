/**
 * `placement_claim` of migration 006 (generic plans, fewer statements, a new consumer inserted
 * with its final generation) against 005's, which it replaced: the same sequence of claims on a
 * database migrated up to 005 and on one migrated up to 006 gives the same answers, the same
 * consumer rows (generation, owner, updated_at set or not), allocations, provider generations and
 * change-log rows, step by step. The sequence takes every branch: a new consumer, the same claim
 * retried (replaced, not doubled), a refusal of a new consumer (nothing left), allocations held
 * without a consumer row, a new consumer claiming nothing, a release, generation checks, a change
 * of project. Both are history since migration 009 (placement_write, which no longer bumps a
 * provider a consumer only leaves): the second test runs the live function.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { claimAllocations, type ConsumerAllocationsInput } from '../../src/adapters/sql/allocation-writer';
import { ClaimBatcher } from '../../src/adapters/sql/claim-batcher';
import { placementTestDatabase } from './candidates-fixture';

const MIGRATIONS = join(__dirname, '../../migrations');
let upTo005: string;
let upTo006: string;
let before: TestDatabase;
let after: TestDatabase;

// NOTE: fixed uuids, so the two databases (and their outcomes) compare as they are.
const R0 = '00000000-0000-4000-8000-0000000000a0';
const R1 = '00000000-0000-4000-8000-0000000000a1';
const C = Array.from({ length: 7 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);

async function seed(db: TestDatabase): Promise<void> {
  await db.pool.query(`INSERT INTO resource_providers (uuid, name) VALUES ('${R0}', 'r0'), ('${R1}', 'r1');
    UPDATE resource_providers SET root_provider_id = id;
    INSERT INTO inventories (resource_provider_id, resource_class_id, total, max_unit)
      SELECT rp.id, rc.id, CASE rc.name WHEN 'VCPU' THEN 10 ELSE 4096 END, CASE rc.name WHEN 'VCPU' THEN 10 ELSE 4096 END
        FROM resource_providers rp, resource_classes rc WHERE rc.name IN ('VCPU', 'MEMORY_MB');
    DELETE FROM candidate_changes;`);
}

beforeAll(async () => {
  upTo005 = mkdtempSync(join(tmpdir(), 'placement-005-'));
  upTo006 = mkdtempSync(join(tmpdir(), 'placement-006-'));
  for (const f of readdirSync(MIGRATIONS).filter((n) => /^00[1-5]_.*\.sql$/.test(n))) copyFileSync(join(MIGRATIONS, f), join(upTo005, f));
  for (const f of readdirSync(MIGRATIONS).filter((n) => /^00[1-6]_.*\.sql$/.test(n))) copyFileSync(join(MIGRATIONS, f), join(upTo006, f));
  before = await createTestDatabase({ kind: 'placement', migrationsDir: upTo005, prefix: 'claim_005' });
  after = await createTestDatabase({ kind: 'placement', migrationsDir: upTo006, prefix: 'claim_006' });
  await seed(before);
  await seed(after);
});
afterAll(async () => {
  await before?.drop();
  await after?.drop();
  rmSync(upTo005, { recursive: true, force: true });
  rmSync(upTo006, { recursive: true, force: true });
});

const on = (rp: string, resources: Record<string, number>) => ({ providerUuid: rp, resources });
const claim = (
  i: number,
  allocations: ConsumerAllocationsInput['allocations'],
  extra: Partial<ConsumerAllocationsInput> = {},
): ConsumerAllocationsInput => ({
  consumerUuid: C[i] as string,
  projectId: 'p',
  userId: 'u',
  consumerType: 'INSTANCE',
  allocations,
  ...extra,
});

type Step = { claim: ConsumerAllocationsInput; check?: boolean } | { sql: string };
const STEPS: Step[] = [
  { claim: claim(0, [on(R0, { VCPU: 4 })]) }, // a new consumer: generation 1
  { claim: claim(0, [on(R0, { VCPU: 4 })]) }, // the same claim again: replaced (4, not 8), generation 2
  { claim: claim(1, [on(R0, { VCPU: 7 })]) }, // a new consumer refused (4 + 7 > 10): no consumer row left
  {
    sql: `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
            SELECT id, '${C[2]}', (SELECT id FROM resource_classes WHERE name = 'VCPU'), 3 FROM resource_providers WHERE uuid = '${R1}'`,
  },
  { claim: claim(2, [on(R0, { VCPU: 2 }), on(R1, { MEMORY_MB: 512 })]) }, // no consumer row but allocations held: replaced
  { claim: claim(3, []) }, // a new consumer claiming nothing: 0, no row
  { claim: claim(4, [on(R1, { VCPU: 1 })], { consumerGeneration: null }), check: true }, // generation null: a new consumer
  { claim: claim(4, [on(R1, { VCPU: 2, MEMORY_MB: 256 })], { consumerGeneration: 1 }), check: true },
  { claim: claim(4, [on(R1, { VCPU: 2 })], { consumerGeneration: 1 }), check: true }, // stale generation
  { claim: claim(5, [on(R1, { VCPU: 1 })], { consumerGeneration: 3 }), check: true }, // a generation for a consumer that does not exist
  { claim: claim(4, [on(R0, { VCPU: 1 })], { projectId: 'q', consumerType: 'MIGRATION' }) }, // another project and type
  { claim: claim(6, [on(R0, { VCPU: 1 }), on(R0, { VCPU: 2 })]) }, // the same provider and class twice in one claim
  { claim: claim(0, []) }, // release: consumer deleted
];

async function outcome(f: () => Promise<number>): Promise<unknown> {
  try {
    return { generation: await f() };
  } catch (err) {
    const e = err as Error & { status?: number; failure?: unknown };
    return { name: e.constructor.name, status: e.status, message: e.message, failure: e.failure };
  }
}

/** Everything a claim writes, by name (ids are the same in both databases but names say more); the change log emptied after. */
async function state(db: TestDatabase): Promise<unknown> {
  const r = await db.pool.query(`SELECT
    (SELECT json_agg(x ORDER BY x.uuid) FROM (SELECT c.uuid, c.generation, p.external_id AS project, u.external_id AS usr, t.name AS type,
        c.updated_at IS NULL AS never_updated FROM consumers c JOIN projects p ON p.id = c.project_id JOIN users u ON u.id = c.user_id
        LEFT JOIN consumer_types t ON t.id = c.consumer_type_id) x) AS consumers,
    (SELECT json_agg(x ORDER BY x.consumer_id, x.rp, x.rc, x.used) FROM (SELECT a.consumer_id, rp.name AS rp, rc.name AS rc, a.used
        FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id) x) AS allocations,
    (SELECT json_agg(x ORDER BY x.name) FROM (SELECT name, generation FROM resource_providers) x) AS providers,
    (SELECT json_agg(x ORDER BY x.kind, x.rp) FROM (SELECT cc.kind, rp.name AS rp FROM candidate_changes cc
        LEFT JOIN resource_providers rp ON rp.id = cc.resource_provider_id) x) AS change_log,
    (SELECT count(DISTINCT xid) FROM candidate_changes) AS transactions`);
  await db.pool.query('DELETE FROM candidate_changes');
  return r.rows[0];
}

test('every step answers and writes as 005 did: generations, consumer rows, allocations, provider generations, change-log rows', async () => {
  const run = async (db: TestDatabase): Promise<unknown[]> => {
    const seen: unknown[] = [];
    for (const step of STEPS) {
      if ('sql' in step) await db.pool.query(step.sql);
      else seen.push(await outcome(() => claimAllocations(db.pool, step.claim, { checkConsumerGeneration: step.check ?? false })));
      seen.push(await state(db));
    }
    return seen;
  };
  const was = await run(before);
  const now = await run(after);
  expect(now).toEqual(was);

  // and what that is, so a change of both would show too
  const answers = now.filter((x) => typeof x === 'object' && x !== null && !('consumers' in x));
  expect(answers).toEqual([
    { generation: 1 },
    { generation: 2 },
    expect.objectContaining({ status: 409, failure: expect.objectContaining({ kind: 'capacity_exceeded' }) }),
    { generation: 1 },
    { generation: 0 },
    { generation: 1 },
    { generation: 2 },
    expect.objectContaining({ status: 409, message: expect.stringContaining('expected 2 but got 1') }),
    expect.objectContaining({ status: 409, message: expect.stringContaining('expected null but got 3') }),
    { generation: 3 },
    { generation: 1 },
    { generation: 0 },
  ]);
  const last = now[now.length - 1] as {
    consumers: { uuid: string; generation: number }[];
    allocations: { consumer_id: string; used: number }[];
  };
  expect(last.consumers.map((c) => [c.uuid, c.generation])).toEqual([
    [C[2], 1],
    [C[4], 3],
    [C[6], 1],
  ]);
  // the retried claim of step 2 replaced the first: consumer 0 held 4, never 8, until its release
  const afterRetry = now[3] as typeof last;
  expect(afterRetry.allocations.filter((a) => a.consumer_id === C[0]).map((a) => a.used)).toEqual([4]);
});

test('the batch function takes the same branches: a batch of the same sequence writes the same', async () => {
  const db = await placementTestDatabase('claim_006_batch');
  try {
    await seed(db);
    const batcher = new ClaimBatcher(db.pool);
    const seen: unknown[] = [];
    // NOTE: each step in a batch of its own (placement_claim_many), beside a claim that writes nothing (a new consumer claiming nothing)
    for (const step of STEPS) {
      if ('sql' in step) {
        await db.pool.query(step.sql);
      } else {
        const [got] = await Promise.all([
          outcome(() => batcher.claim(step.claim, { checkConsumerGeneration: step.check ?? false })),
          batcher.claim({ consumerUuid: '00000000-0000-4000-8000-0000000000ff', allocations: [] }, { checkConsumerGeneration: false }),
        ]);
        seen.push(got);
      }
      seen.push(await state(db));
    }
    expect(batcher.stats.batches).toBe(STEPS.filter((s) => !('sql' in s)).length);
    const alone: unknown[] = [];
    const again = await placementTestDatabase('claim_006_alone');
    try {
      await seed(again);
      for (const step of STEPS) {
        if ('sql' in step) await again.pool.query(step.sql);
        else alone.push(await outcome(() => claimAllocations(again.pool, step.claim, { checkConsumerGeneration: step.check ?? false })));
        alone.push(await state(again));
      }
    } finally {
      await again.drop();
    }
    expect(seen).toEqual(alone);
  } finally {
    await db.drop();
  }
});
