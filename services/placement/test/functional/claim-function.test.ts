/**
 * The one-round-trip claim (`placement_claim`, migration 004) against the allocation writer it
 * mirrors: for every refusal both give the same error (class, status, wording, failure detail)
 * and write nothing; successful claims replace, bump generations and count capacity as the
 * writer does, fractional allocation ratios included.
 */
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '@cellsched/db';
import { claimAllocations, type ConsumerAllocationsInput, writeAllocations } from '../../src/adapters/sql/allocation-writer';
import { placementTestDatabase, ProviderBuilder, type ProviderRef } from './candidates-fixture';

let db: TestDatabase;
let a: ProviderRef;
let b: ProviderRef;

beforeAll(async () => {
  db = await placementTestDatabase('claim_fn');
  const build = new ProviderBuilder(db.pool);
  // VCPU capacity (10 - 3) * 1.5 = 10.5; MEMORY_MB in steps of 256 up to 2048
  a = await build.provider('a', {
    inventories: {
      VCPU: { total: 10, reserved: 3, allocation_ratio: 1.5, max_unit: 6 },
      MEMORY_MB: { total: 4096, step_size: 256, max_unit: 2048 },
    },
  });
  b = await build.provider('b', { inventories: { DISK_GB: { total: 100 } } });
});
afterAll(async () => {
  await db.drop();
});

const input = (
  consumer: string,
  allocations: ConsumerAllocationsInput['allocations'],
  extra: Partial<ConsumerAllocationsInput> = {},
): ConsumerAllocationsInput => ({ consumerUuid: consumer, projectId: 'p', userId: 'u', consumerType: 'INSTANCE', allocations, ...extra });

async function outcome(f: () => Promise<unknown>): Promise<unknown> {
  try {
    await f();
    return 'ok';
  } catch (err) {
    const e = err as Error & { status?: number; failure?: unknown };
    return { name: e.constructor.name, status: e.status, message: e.message, failure: e.failure };
  }
}

async function snapshot(): Promise<unknown> {
  const r = await db.pool
    .query(`SELECT (SELECT json_agg(x ORDER BY x.consumer_id, x.resource_class_id) FROM (SELECT consumer_id, resource_provider_id, resource_class_id, used FROM allocations) x) AS allocs,
    (SELECT json_agg(x ORDER BY x.uuid) FROM (SELECT uuid, generation FROM consumers) x) AS consumers,
    (SELECT json_agg(x ORDER BY x.id) FROM (SELECT id, generation FROM resource_providers) x) AS rps`);
  return r.rows[0];
}

/** Both paths on the same state: the same refusal, and nothing written by either. */
async function sameRefusal(make: (consumer: string) => ConsumerAllocationsInput, checkConsumerGeneration = false): Promise<unknown> {
  const before = await snapshot();
  const consumer = randomUUID();
  const viaFunction = await outcome(() => claimAllocations(db.pool, make(consumer), { checkConsumerGeneration }));
  const viaWriter = await outcome(() => writeAllocations(db.pool, [make(consumer)], { checkConsumerGeneration }));
  expect(viaFunction).not.toBe('ok');
  expect(viaFunction).toEqual(viaWriter);
  expect(await snapshot()).toEqual(before);
  return viaFunction;
}

test.each([
  [
    'an unknown provider (the first one named)',
    () => [
      { providerUuid: a.uuid, resources: { VCPU: 1 } },
      { providerUuid: randomUUID(), resources: { VCPU: 1 } },
    ],
  ],
  ['an unknown resource class', () => [{ providerUuid: a.uuid, resources: { VCPU: 1, CUSTOM_NOPE: 1 } }]],
  ['a class the provider has no inventory of', () => [{ providerUuid: b.uuid, resources: { VCPU: 1 } }]],
  ['an amount above max_unit', () => [{ providerUuid: a.uuid, resources: { VCPU: 7 } }]],
  ['an amount off the step size', () => [{ providerUuid: a.uuid, resources: { MEMORY_MB: 300 } }]],
  ['more than (total - reserved) * ratio', () => [{ providerUuid: b.uuid, resources: { DISK_GB: 101 } }]],
])('%s: the same refusal as the writer, nothing written', async (_name, allocations) => {
  const named = allocations();
  await sameRefusal((c) => input(c, named));
});

test('capacity with a fractional ratio: 10 of 10.5 fits, one more is refused exactly as the writer refuses it', async () => {
  const holder = randomUUID();
  expect(
    await claimAllocations(db.pool, input(holder, [{ providerUuid: a.uuid, resources: { VCPU: 6 } }]), { checkConsumerGeneration: false }),
  ).toBe(1);
  const second = randomUUID();
  await claimAllocations(db.pool, input(second, [{ providerUuid: a.uuid, resources: { VCPU: 4 } }]), { checkConsumerGeneration: false });
  const refused = await sameRefusal((c) => input(c, [{ providerUuid: a.uuid, resources: { VCPU: 1 } }]));
  expect(refused).toMatchObject({ status: 409, failure: { kind: 'capacity_exceeded', resourceClass: 'VCPU', providerUuid: a.uuid } });
  // replacing its own claim does not count the consumer twice: 6 -> 6 still fits beside the other 4
  expect(
    await claimAllocations(db.pool, input(holder, [{ providerUuid: a.uuid, resources: { VCPU: 6 } }]), { checkConsumerGeneration: false }),
  ).toBe(2);
  await writeAllocations(db.pool, [input(holder, []), input(second, [])], { checkConsumerGeneration: false });
});

test("generation checks: the writer's conflicts and wording", async () => {
  const fresh = await sameRefusal((c) => input(c, [{ providerUuid: b.uuid, resources: { DISK_GB: 1 } }], { consumerGeneration: 4 }), true);
  expect(fresh).toMatchObject({ status: 409, message: expect.stringContaining('expected null but got 4') });
  const consumer = randomUUID();
  expect(
    await claimAllocations(db.pool, input(consumer, [{ providerUuid: b.uuid, resources: { DISK_GB: 1 } }], { consumerGeneration: null }), {
      checkConsumerGeneration: true,
    }),
  ).toBe(1);
  const viaFunction = await outcome(() =>
    claimAllocations(db.pool, input(consumer, [{ providerUuid: b.uuid, resources: { DISK_GB: 2 } }], { consumerGeneration: 0 }), {
      checkConsumerGeneration: true,
    }),
  );
  const viaWriter = await outcome(() =>
    writeAllocations(db.pool, [input(consumer, [{ providerUuid: b.uuid, resources: { DISK_GB: 2 } }], { consumerGeneration: 0 })], {
      checkConsumerGeneration: true,
    }),
  );
  expect(viaFunction).toEqual(viaWriter);
  expect(viaFunction).toMatchObject({ status: 409, message: expect.stringContaining('expected 1 but got 0') });
  await writeAllocations(db.pool, [input(consumer, [])], { checkConsumerGeneration: false });
});

test("a replace moves the claim: old provider freed, both providers' generations bumped, new project created", async () => {
  const consumer = randomUUID();
  await claimAllocations(db.pool, input(consumer, [{ providerUuid: a.uuid, resources: { VCPU: 2, MEMORY_MB: 512 } }]), {
    checkConsumerGeneration: false,
  });
  const gens = async (): Promise<number[]> =>
    (
      await db.pool.query<{ generation: number }>('SELECT generation FROM resource_providers WHERE id = ANY($1) ORDER BY id', [
        [a.id, b.id],
      ])
    ).rows.map((r) => r.generation);
  const [ga, gb] = await gens();
  const project = `project-${consumer}`;
  expect(
    await claimAllocations(db.pool, input(consumer, [{ providerUuid: b.uuid, resources: { DISK_GB: 5 } }], { projectId: project }), {
      checkConsumerGeneration: false,
    }),
  ).toBe(2);
  expect(await gens()).toEqual([(ga as number) + 1, (gb as number) + 1]);
  const held = await db.pool.query('SELECT resource_provider_id AS rp, used FROM allocations WHERE consumer_id = $1', [consumer]);
  expect(held.rows).toEqual([{ rp: b.id, used: 5 }]);
  const owner = await db.pool.query('SELECT p.external_id FROM consumers c JOIN projects p ON p.id = c.project_id WHERE c.uuid = $1', [
    consumer,
  ]);
  expect(owner.rows).toEqual([{ external_id: project }]);
  expect(await claimAllocations(db.pool, input(consumer, []), { checkConsumerGeneration: false })).toBe(0);
  expect((await db.pool.query('SELECT 1 FROM consumers WHERE uuid = $1', [consumer])).rowCount).toBe(0);
});

test('20 concurrent claims on room for 10 (10.5 VCPU): exactly 10 succeed, never over capacity', async () => {
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      outcome(() =>
        claimAllocations(db.pool, input(randomUUID(), [{ providerUuid: a.uuid, resources: { VCPU: 1, MEMORY_MB: 256 } }]), {
          checkConsumerGeneration: false,
        }),
      ),
    ),
  );
  expect(results.filter((r) => r === 'ok')).toHaveLength(10);
  const used = await db.pool.query<{ s: string }>(
    "SELECT sum(used) AS s FROM allocations WHERE resource_provider_id = $1 AND resource_class_id = (SELECT id FROM resource_classes WHERE name = 'VCPU')",
    [a.id],
  );
  expect(Number(used.rows[0]?.s)).toBe(10);
});
