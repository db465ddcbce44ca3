/**
 * The gRPC PlacementService against a real PostgreSQL: candidates, Claim (new consumer,
 * generation conflict, replace, capacity), concurrent claims never exceeding capacity,
 * Move (instance -> migration swap), Release (idempotent), usages, consumer allocations,
 * bad input as INVALID_ARGUMENT, and ClaimMany (each claim answered as Claim would answer it).
 */
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '@cellsched/db';
import { FailureError, GrpcStatus, createGrpcClient, startGrpcServer, type GrpcClient, type RunningGrpcServer } from '@cellsched/grpc';
import { PlacementServiceClient, type ConsumerAllocations } from '@cellsched/wire';
import pino from 'pino';
import { placementServiceBinding } from '../../src/adapters/grpc/placement-service';
import { placementTestDatabase, ProviderBuilder, type ProviderRef } from './candidates-fixture';

type Client = GrpcClient<typeof PlacementServiceClient.service>;
let db: TestDatabase;
let server: RunningGrpcServer;
let client: Client;
let b: ProviderBuilder;
let cn1: ProviderRef;
let cn2: ProviderRef;

async function failure(p: Promise<unknown>): Promise<FailureError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FailureError);
    return err as FailureError;
  }
  throw new Error('expected a failure');
}

function consumer(uuid: string, rp: ProviderRef, vcpu: number, generation?: number): ConsumerAllocations {
  return {
    consumerUuid: uuid,
    projectId: 'p1',
    userId: 'u1',
    consumerType: 'INSTANCE',
    ...(generation === undefined ? {} : { consumerGeneration: generation }),
    allocations: [{ resourceProviderUuid: rp.uuid, resources: { VCPU: vcpu } }],
  };
}

beforeAll(async () => {
  db = await placementTestDatabase('candidates_grpc');
  b = new ProviderBuilder(db.pool);
  server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    services: [placementServiceBinding(db.pool)],
    logger: pino({ level: 'silent' }),
  });
  client = createGrpcClient(PlacementServiceClient, { addresses: [server.address], deadlineMs: 10_000, maxAttempts: 1 });
});
afterAll(async () => {
  client.close();
  await server.shutdown();
  await db.drop();
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE consumers, projects, users, consumer_types RESTART IDENTITY CASCADE');
  await b.clear();
  cn1 = await b.provider('cn1', { inventories: { VCPU: { total: 10 }, MEMORY_MB: { total: 4096 } }, traits: ['HW_CPU_X86_AVX2'] });
  cn2 = await b.provider('cn2', { inventories: { VCPU: { total: 4 } } });
});

test('GetAllocationCandidates answers candidates and full summaries', async () => {
  const res = await client.getAllocationCandidates({
    groups: [
      { suffix: '', resources: { VCPU: 5 }, required: ['HW_CPU_X86_AVX2'], forbidden: [], memberOf: [], forbiddenMemberOf: [], inTree: '' },
    ],
    groupPolicy: '',
    limit: 0,
    rootRequired: [],
    rootForbidden: [],
    sameSubtree: [],
    seed: 0,
  });
  expect(res.allocationRequests).toEqual([
    { allocations: [{ resourceProviderUuid: cn1.uuid, resources: { VCPU: 5 } }], mappings: { '': { providerUuids: [cn1.uuid] } } },
  ]);
  expect(res.providerSummaries[cn1.uuid]).toMatchObject({
    name: 'cn1',
    rootProviderUuid: cn1.uuid,
    parentProviderUuid: '',
    traits: ['HW_CPU_X86_AVX2'],
  });
  expect(res.providerSummaries[cn1.uuid]?.resources.MEMORY_MB).toEqual({ capacity: 4096, used: 0 });
});

test('GetAllocationCandidates rejects a bad query with INVALID_ARGUMENT and Placement text', async () => {
  const group = { resources: { VCPU: 1 }, required: [], forbidden: [], memberOf: [], forbiddenMemberOf: [], inTree: '' };
  const err = await failure(
    client.getAllocationCandidates({
      groups: [
        { ...group, suffix: '1' },
        { ...group, suffix: '2' },
      ],
      groupPolicy: '',
      limit: 0,
      rootRequired: [],
      rootForbidden: [],
      sameSubtree: [],
      seed: 0,
    }),
  );
  expect(err.status).toBe(GrpcStatus.INVALID_ARGUMENT);
  expect(err.message).toContain('"group_policy" parameter is required');
});

test('Claim: new consumer, generation conflict, replace, capacity', async () => {
  const c = randomUUID();
  expect(
    (await client.claim({ consumer: consumer(c, cn1, 6), replace: false, group: undefined })).consumerGeneration,
  ).toBeGreaterThanOrEqual(0);
  const conflict = await failure(client.claim({ consumer: consumer(c, cn1, 6), replace: false, group: undefined }));
  expect([conflict.code, conflict.status, conflict.retryable]).toEqual(['placement.concurrent_update', GrpcStatus.ABORTED, true]);
  await client.claim({ consumer: consumer(c, cn1, 7), replace: true, group: undefined });
  expect((await client.getUsages({ resourceProviderUuid: cn1.uuid, projectId: '', userId: '', consumerType: '' })).usages.VCPU).toBe(7);
  const full = await failure(client.claim({ consumer: consumer(randomUUID(), cn1, 4), replace: false, group: undefined }));
  expect([full.code, full.status]).toEqual(['placement.allocation.capacity_exceeded', GrpcStatus.FAILED_PRECONDITION]);
  expect(full.failure.metadata).toMatchObject({ resource_class: 'VCPU', resource_provider_uuid: cn1.uuid });
});

test('concurrent claims never exceed capacity', async () => {
  const results = await Promise.allSettled(
    Array.from({ length: 25 }, () => client.claim({ consumer: consumer(randomUUID(), cn2, 1), replace: false, group: undefined })),
  );
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
  for (const r of results)
    if (r.status === 'rejected') expect((r.reason as FailureError).code).toBe('placement.allocation.capacity_exceeded');
  expect((await client.getUsages({ resourceProviderUuid: cn2.uuid, projectId: '', userId: '', consumerType: '' })).usages.VCPU).toBe(4);
});

test('Move swaps an instance to a migration consumer atomically; Release is idempotent', async () => {
  const instance = randomUUID();
  const migration = randomUUID();
  const gen = (await client.claim({ consumer: consumer(instance, cn1, 2), replace: false, group: undefined })).consumerGeneration;
  await client.move({ consumers: [{ ...consumer(migration, cn1, 2), consumerType: 'MIGRATION' }, consumer(instance, cn2, 2, gen)] });
  const moved = await client.getConsumerAllocations({ consumerUuid: instance });
  expect(moved.consumer?.allocations).toEqual([{ resourceProviderUuid: cn2.uuid, resources: { VCPU: 2 } }]);
  expect((await client.getConsumerAllocations({ consumerUuid: migration })).consumer?.consumerType).toBe('MIGRATION');
  expect((await client.release({ consumerUuids: [migration, randomUUID()] })).released).toEqual([migration]);
  expect((await client.release({ consumerUuids: [migration] })).released).toEqual([]);
  expect((await client.getConsumerAllocations({ consumerUuid: migration })).exists).toBe(false);
  expect((await client.getUsages({ resourceProviderUuid: cn1.uuid, projectId: '', userId: '', consumerType: '' })).usages.VCPU).toBe(0);
  expect((await client.getUsages({ resourceProviderUuid: '', projectId: 'p1', userId: '', consumerType: '' })).usages).toEqual({ VCPU: 2 });
});

test('ListProviderConsumers answers the consumers on each known provider, in the order asked, unknown ones absent', async () => {
  const [a, c] = [randomUUID(), randomUUID()].sort();
  await client.claim({ consumer: consumer(a as string, cn1, 1), replace: false, group: undefined });
  await client.claim({
    consumer: {
      ...consumer(c as string, cn1, 1),
      allocations: [{ resourceProviderUuid: cn1.uuid, resources: { VCPU: 1, MEMORY_MB: 64 } }],
    },
    replace: false,
    group: undefined,
  });
  const unknown = randomUUID();
  expect((await client.listProviderConsumers({ providerUuids: [cn2.uuid, unknown, cn1.uuid.toUpperCase()] })).providers).toEqual([
    { providerUuid: cn2.uuid, consumerUuids: [] },
    { providerUuid: cn1.uuid, consumerUuids: [a, c] },
  ]);
  expect((await client.listProviderConsumers({ providerUuids: [] })).providers).toEqual([]);
  const bad = await failure(client.listProviderConsumers({ providerUuids: ['nope'] }));
  expect(bad.status).toBe(GrpcStatus.INVALID_ARGUMENT);
});

test('bad input is INVALID_ARGUMENT and writes nothing', async () => {
  const bad = await failure(
    client.claim({
      consumer: { ...consumer(randomUUID(), cn1, 1), allocations: [{ resourceProviderUuid: 'nope', resources: { VCPU: 1 } }] },
      replace: false,
      group: undefined,
    }),
  );
  expect(bad.status).toBe(GrpcStatus.INVALID_ARGUMENT);
  const unknownRc = await failure(
    client.claim({
      consumer: { ...consumer(randomUUID(), cn1, 1), allocations: [{ resourceProviderUuid: cn1.uuid, resources: { NOPE: 1 } }] },
      replace: false,
      group: undefined,
    }),
  );
  expect(unknownRc.status).toBe(GrpcStatus.INVALID_ARGUMENT);
  expect((await db.pool.query('SELECT count(*)::int AS n FROM allocations')).rows[0]).toEqual({ n: 0 });
});

test('ClaimMany: each claim answered as Claim would answer it, refusals and bad input alone', async () => {
  const [a, c, d] = [randomUUID(), randomUUID(), randomUUID()];
  const before = await client.claim({ consumer: consumer(d, cn2, 1), replace: false, group: undefined });
  const res = await client.claimMany({
    claims: [
      { consumer: consumer(a, cn1, 6), replace: true, group: undefined }, // fits (6 of 10)
      { consumer: consumer(randomUUID(), cn1, 5), replace: true, group: undefined }, // 6 + 5 > 10: refused
      { consumer: { ...consumer(randomUUID(), cn1, 1), consumerUuid: 'not-a-uuid' }, replace: true, group: undefined }, // bad input: that claim alone
      { consumer: consumer(c, cn1, 4), replace: true, group: undefined }, // fits (10 of 10): the refusal above left nothing behind
      { consumer: consumer(d, cn2, 2, 0), replace: false, group: undefined }, // generation conflict (it is 1)
    ],
  });
  expect(res.results.map((r) => r.failure?.code ?? `ok:${r.consumerGeneration}`)).toEqual([
    'ok:1',
    'placement.allocation.capacity_exceeded',
    'placement.request.invalid',
    'ok:1',
    'placement.concurrent_update',
  ]);
  expect(res.results[1]?.failure).toMatchObject({
    expected: true,
    metadata: { reason: 'capacity_exceeded', resource_class: 'VCPU', resource_provider_uuid: cn1.uuid },
  });
  expect(before.consumerGeneration).toBe(1);
  const usage = await client.getUsages({ resourceProviderUuid: cn1.uuid, projectId: '', userId: '', consumerType: '' });
  expect(usage.usages.VCPU).toBe(10);
  expect((await client.getUsages({ resourceProviderUuid: cn2.uuid, projectId: '', userId: '', consumerType: '' })).usages.VCPU).toBe(1);
});
