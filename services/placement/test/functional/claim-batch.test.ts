/**
 * Group commit of gRPC claims (`ClaimBatcher`, `placement_claim_many`, migration 005): a batch
 * decides exactly as the same claims run one after another through `placement_claim` (same
 * outcomes, same errors, same writes), each claim is all-or-nothing on its own (a refused or
 * failing claim leaves the others of its batch written), and concurrent claims never go over
 * capacity.
 */
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '@cellsched/db';
import { claimAllocations, type ConsumerAllocationsInput } from '../../src/adapters/sql/allocation-writer';
import { ClaimBatcher } from '../../src/adapters/sql/claim-batcher';
import { placementTestDatabase, ProviderBuilder, type ProviderRef } from './candidates-fixture';

let db: TestDatabase;
let build: ProviderBuilder;

beforeAll(async () => {
  db = await placementTestDatabase('claim_batch');
  build = new ProviderBuilder(db.pool);
});
afterAll(async () => {
  await db.drop();
});

const input = (
  consumer: string,
  allocations: ConsumerAllocationsInput['allocations'],
  extra: Partial<ConsumerAllocationsInput> = {},
): ConsumerAllocationsInput => ({ consumerUuid: consumer, projectId: 'p', userId: 'u', consumerType: 'INSTANCE', allocations, ...extra });

interface Step {
  readonly input: ConsumerAllocationsInput;
  readonly checkConsumerGeneration: boolean;
}

/** One sequence of claims on provider `rp` (10 VCPU), its consumers named by index so two runs can be compared. */
function sequence(rp: ProviderRef, consumers: readonly string[], unknownProvider: string): Step[] {
  const on = (i: number, vcpu: number, extra: Partial<ConsumerAllocationsInput> = {}): ConsumerAllocationsInput =>
    input(consumers[i] as string, [{ providerUuid: rp.uuid, resources: { VCPU: vcpu } }], extra);
  return [
    { input: on(0, 4), checkConsumerGeneration: false }, // fits (4)
    { input: on(1, 4), checkConsumerGeneration: false }, // fits (8)
    { input: on(2, 3), checkConsumerGeneration: false }, // over capacity: 8 + 3 > 10
    { input: input(consumers[3] as string, [{ providerUuid: unknownProvider, resources: { VCPU: 1 } }]), checkConsumerGeneration: false }, // 400
    { input: on(4, 2 ** 40), checkConsumerGeneration: false }, // not an int4: that claim's own error
    { input: on(5, 1), checkConsumerGeneration: false }, // fits (9): after the refusals and the error
    { input: on(0, 2), checkConsumerGeneration: false }, // consumer 0 replaces 4 by 2 (7)
    { input: on(6, 1, { consumerGeneration: 3 }), checkConsumerGeneration: true }, // generation conflict (new consumer)
    { input: on(7, 3), checkConsumerGeneration: false }, // fits (10) only because consumer 0 shrank
    { input: on(8, 1), checkConsumerGeneration: false }, // full
    { input: input(consumers[5] as string, []), checkConsumerGeneration: false }, // release all of consumer 5 (9)
    { input: on(8, 1), checkConsumerGeneration: false }, // fits again (10)
  ];
}

/** A comparable outcome: the generation, or the error's class, status, code and message, with provider/consumer uuids named by role. */
async function outcome(f: () => Promise<number>, names: ReadonlyMap<string, string>): Promise<unknown> {
  const rename = (s: string): string => [...names].reduce((acc, [uuid, name]) => acc.split(uuid).join(name), s);
  try {
    return { generation: await f() };
  } catch (err) {
    const e = err as Error & { status?: number; code?: string; failure?: unknown };
    // NOTE: a lone claim's SQL error is pg's DatabaseError, a batched one's ClaimStatementError: both carry the SQLSTATE and text.
    const name = e.constructor.name === 'DatabaseError' || e.constructor.name === 'ClaimStatementError' ? 'SqlError' : e.constructor.name;
    return {
      name,
      status: e.status,
      code: e.code,
      message: rename(e.message),
      failure: JSON.parse(rename(JSON.stringify(e.failure ?? null))),
    };
  }
}

async function heldBy(consumers: readonly string[]): Promise<unknown[]> {
  const r = await db.pool.query<{ consumer_id: string; used: number }>(
    'SELECT consumer_id, used FROM allocations WHERE consumer_id = ANY($1::uuid[])',
    [consumers],
  );
  return consumers.map((c) => r.rows.filter((x) => x.consumer_id === c).map((x) => x.used));
}

test('a batch answers every claim as the same claims run one after another would, and writes the same', async () => {
  const unknown = randomUUID();
  const serial = {
    rp: await build.provider('serial', { inventories: { VCPU: { total: 10 } } }),
    consumers: Array.from({ length: 9 }, () => randomUUID()),
  };
  const batched = {
    rp: await build.provider('batched', { inventories: { VCPU: { total: 10 } } }),
    consumers: Array.from({ length: 9 }, () => randomUUID()),
  };
  const names = (run: typeof serial): Map<string, string> =>
    new Map([[run.rp.uuid, 'RP'], [unknown, 'UNKNOWN'], ...run.consumers.map((c, i): [string, string] => [c, `C${i}`])]);

  const expected: unknown[] = [];
  for (const step of sequence(serial.rp, serial.consumers, unknown)) {
    expected.push(
      await outcome(() => claimAllocations(db.pool, step.input, { checkConsumerGeneration: step.checkConsumerGeneration }), names(serial)),
    );
  }

  const batcher = new ClaimBatcher(db.pool);
  // NOTE: claims queued in the same task go together: ONE batch.
  const steps = sequence(batched.rp, batched.consumers, unknown);
  const got = await Promise.all(
    steps.map((step) =>
      outcome(() => batcher.claim(step.input, { checkConsumerGeneration: step.checkConsumerGeneration }), names(batched)),
    ),
  );
  expect(batcher.stats).toMatchObject({ claims: steps.length, statements: 1, batches: 1, largestBatch: steps.length, reruns: 0 });

  expect(got).toEqual(expected);
  expect(got[2]).toMatchObject({ name: 'AllocationConflict', failure: { kind: 'capacity_exceeded' } });
  expect(got[3]).toMatchObject({ status: 400 });
  expect(got[4]).toMatchObject({ name: 'SqlError', code: '22003' });
  expect(got[7]).toMatchObject({ status: 409, message: expect.stringContaining('expected null but got 3') });
  expect(await heldBy(batched.consumers)).toEqual(await heldBy(serial.consumers));
  expect(await heldBy(batched.consumers)).toEqual([[2], [4], [], [], [], [], [], [3], [1]]);
  const gen = async (rp: ProviderRef): Promise<number> =>
    (await db.pool.query<{ generation: number }>('SELECT generation FROM resource_providers WHERE id = $1', [rp.id])).rows[0]?.generation ??
    -1;
  expect(await gen(batched.rp)).toBe(await gen(serial.rp));
});

test('60 concurrent claims through the batcher on room for 25: exactly 25 succeed, in batches, never over capacity', async () => {
  const rp = await build.provider('race', { inventories: { VCPU: { total: 25 }, MEMORY_MB: { total: 100000 } } });
  const batcher = new ClaimBatcher(db.pool, 8);
  const results = await Promise.all(
    Array.from({ length: 60 }, () =>
      batcher
        .claim(input(randomUUID(), [{ providerUuid: rp.uuid, resources: { VCPU: 1, MEMORY_MB: 256 } }]), { checkConsumerGeneration: false })
        .then(
          () => 'ok',
          (e: Error) => e.constructor.name,
        ),
    ),
  );
  expect(results.filter((r) => r === 'ok')).toHaveLength(25);
  expect(results.filter((r) => r !== 'ok').every((r) => r === 'AllocationConflict')).toBe(true);
  expect(batcher.stats.largestBatch).toBe(8);
  const used = await db.pool.query<{ s: string; n: string }>(
    `SELECT sum(used) AS s, count(DISTINCT consumer_id) AS n FROM allocations
    WHERE resource_provider_id = $1 AND resource_class_id = (SELECT id FROM resource_classes WHERE name = 'VCPU')`,
    [rp.id],
  );
  expect(used.rows[0]).toEqual({ s: '25', n: '25' });
});

test('a batch size of 1 sends every claim alone (placement_claim)', async () => {
  const rp = await build.provider('alone', { inventories: { VCPU: { total: 4 } } });
  const batcher = new ClaimBatcher(db.pool, 1);
  await Promise.all(
    Array.from({ length: 3 }, () =>
      batcher.claim(input(randomUUID(), [{ providerUuid: rp.uuid, resources: { VCPU: 1 } }]), { checkConsumerGeneration: false }),
    ),
  );
  expect(batcher.stats).toMatchObject({ claims: 3, statements: 3, batches: 0 });
  expect(() => new ClaimBatcher(db.pool, 0)).toThrow(/maxBatch/);
});
