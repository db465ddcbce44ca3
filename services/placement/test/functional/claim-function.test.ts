/**
 * The one writer (`placement_write`, migration 009) through its two doors: the gRPC claim
 * (`claimAllocations`: `placement_claim`, one consumer) and `writeAllocations` (REST, move,
 * release: several consumers at once). For every refusal both give the same error (class,
 * status, wording, failure detail) and write nothing; successful claims replace, bump
 * generations as Placement's _set_allocations does and count capacity, fractional allocation
 * ratios included; several consumers are written as one (a swap fits where one after the other
 * would not).
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

test('a replace moves the claim: old provider freed and its generation kept (as Placement), the new one bumped, new project created', async () => {
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
  expect(await gens()).toEqual([ga, (gb as number) + 1]);
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

describe('one writer, two doors', () => {
  const claimDoor = async (i: ConsumerAllocationsInput): Promise<void> => {
    await claimAllocations(db.pool, i, { checkConsumerGeneration: false });
  };
  const writeDoor = async (i: ConsumerAllocationsInput): Promise<void> => {
    await writeAllocations(db.pool, [i], { checkConsumerGeneration: false });
  };
  const generations = async (refs: readonly ProviderRef[]): Promise<number[]> =>
    (
      await db.pool.query<{ generation: number }>(
        'SELECT generation FROM resource_providers WHERE id = ANY($1) ORDER BY array_position($1, id)',
        [refs.map((r) => r.id)],
      )
    ).rows.map((r) => r.generation);

  test.each([
    ['the gRPC claim', claimDoor],
    ['writeAllocations', writeDoor],
  ])('%s bumps, once, the providers of the new allocations, and those an emptied consumer held', async (name, write) => {
    const build = new ProviderBuilder(db.pool);
    const p1 = await build.provider(`gen1-${name}`, { inventories: { VCPU: { total: 8 } } });
    const p2 = await build.provider(`gen2-${name}`, { inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 1024 } } });
    const consumer = randomUUID();
    const deltas: number[][] = [];
    for (const allocations of [
      [{ providerUuid: p1.uuid, resources: { VCPU: 2 } }], // a new claim on p1
      [{ providerUuid: p2.uuid, resources: { VCPU: 2, MEMORY_MB: 256 } }], // moved from p1 to p2: p1 only left
      [
        { providerUuid: p1.uuid, resources: { VCPU: 1 } },
        { providerUuid: p2.uuid, resources: { VCPU: 1 } },
      ], // both: once each
      [], // emptied: the providers it held
    ]) {
      const before = await generations([p1, p2]);
      await write(input(consumer, allocations));
      const after = await generations([p1, p2]);
      deltas.push(after.map((g, k) => g - (before[k] as number)));
    }
    expect(deltas).toEqual([
      [1, 0],
      [0, 1],
      [1, 1],
      [1, 1],
    ]);
  });

  test('several consumers are one write: a swap fits where the same claims one after the other do not', async () => {
    const build = new ProviderBuilder(db.pool);
    const source = await build.provider('swap-source', { inventories: { VCPU: { total: 4 } } });
    const dest = await build.provider('swap-dest', { inventories: { VCPU: { total: 4 } } });
    // NOTE: the migration consumer sorts first, so a writer taking consumers one by one in lock order would claim the source first
    const migration = `00000000-0000-4000-8000-${randomUUID().slice(-12)}`;
    const instance = `ffffffff-0000-4000-8000-${randomUUID().slice(-12)}`;
    await claimAllocations(db.pool, input(instance, [{ providerUuid: source.uuid, resources: { VCPU: 4 } }]), {
      checkConsumerGeneration: false,
    });
    const oneByOne = await outcome(() =>
      claimAllocations(db.pool, input(migration, [{ providerUuid: source.uuid, resources: { VCPU: 4 } }]), {
        checkConsumerGeneration: false,
      }),
    );
    expect(oneByOne).toMatchObject({
      status: 409,
      failure: { kind: 'capacity_exceeded', resourceClass: 'VCPU', providerUuid: source.uuid },
    });
    const before = await generations([source, dest]);
    const written = await writeAllocations(
      db.pool,
      [
        input(instance, [{ providerUuid: dest.uuid, resources: { VCPU: 4 } }]),
        input(migration, [{ providerUuid: source.uuid, resources: { VCPU: 4 } }]),
      ],
      { checkConsumerGeneration: false },
    );
    expect(written).toEqual(
      new Map([
        [instance, 2],
        [migration, 1],
      ]),
    );
    expect((await generations([source, dest])).map((g, k) => g - (before[k] as number))).toEqual([1, 1]);
    const held = await db.pool.query(
      'SELECT consumer_id::text AS c, resource_provider_id AS rp, used FROM allocations WHERE consumer_id = ANY($1) ORDER BY c',
      [[instance, migration]],
    );
    expect(held.rows).toEqual([
      { c: migration, rp: source.id, used: 4 },
      { c: instance, rp: dest.id, used: 4 },
    ]);
    // both emptied in one write: each provider they held bumped once, both consumers gone
    const beforeRelease = await generations([source, dest]);
    expect(await writeAllocations(db.pool, [input(instance, []), input(migration, [])], { checkConsumerGeneration: false })).toEqual(
      new Map(),
    );
    expect((await generations([source, dest])).map((g, k) => g - (beforeRelease[k] as number))).toEqual([1, 1]);
    expect((await db.pool.query('SELECT 1 FROM consumers WHERE uuid = ANY($1)', [[instance, migration]])).rowCount).toBe(0);
  });

  test('a provider without inventory of any class the write names fails it naming them all, before an earlier row over capacity', async () => {
    const build = new ProviderBuilder(db.pool);
    const full = await build.provider('bare-check-full', { inventories: { VCPU: { total: 1 } } });
    const refused = await sameRefusal((c) =>
      input(c, [
        { providerUuid: full.uuid, resources: { VCPU: 2 } },
        { providerUuid: b.uuid, resources: { VCPU: 1, MEMORY_MB: 64 } },
      ]),
    );
    expect(refused).toMatchObject({
      status: 409,
      failure: { kind: 'no_inventory', resourceClass: 'VCPU', providerUuid: b.uuid },
      message: `Unable to allocate inventory: Inventory for 'VCPU, MEMORY_MB' on resource provider '${b.uuid}' invalid.`,
    });
  });

  test('a consumer generation conflict comes before an unknown provider (Placement checks the consumer first)', async () => {
    const refused = await sameRefusal(
      (c) => input(c, [{ providerUuid: randomUUID(), resources: { VCPU: 1 } }], { consumerGeneration: 4 }),
      true,
    );
    expect(refused).toMatchObject({ status: 409, message: expect.stringContaining('expected null but got 4') });
  });
});
