/**
 * Move claims over gRPC (PlacementService 1.2, migration 008): ClaimMove moves the instance's
 * source allocation to the migration consumer and claims the destination for the instance in one
 * transaction (never a moment where the instance holds nothing); a retry or the next alternate
 * only re-points the destination; no capacity on the destination writes nothing; a same-host
 * resize needs room for both; RevertMove swaps back in one write and is idempotent; racing moves
 * for the last slot of a destination get exactly one winner; the group policy holds.
 */
import { randomUUID } from 'node:crypto';
import { FailureError, GrpcStatus, createGrpcClient, startGrpcServer, type GrpcClient, type RunningGrpcServer } from '@cellsched/grpc';
import { PlacementClient } from '@cellsched/placement-client';
import { PlacementServiceClient, type ConsumerAllocations } from '@cellsched/wire';
import pino from 'pino';
import { placementServiceBinding } from '../../src/adapters/grpc/placement-service';
import { startPlacement, type PlacementHarness } from './api-helpers';
import { ProviderBuilder, type ProviderRef } from './candidates-fixture';

let h: PlacementHarness;
let server: RunningGrpcServer;
let raw: GrpcClient<typeof PlacementServiceClient.service>;
let client: PlacementClient;
let b: ProviderBuilder;

beforeAll(async () => {
  h = await startPlacement('claim_move', 20);
  b = new ProviderBuilder(h.db.pool);
  server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    services: [placementServiceBinding(h.db.pool)],
    logger: pino({ level: 'silent' }),
  });
  raw = createGrpcClient(PlacementServiceClient, { addresses: [server.address], deadlineMs: 20_000, maxAttempts: 1 });
  client = new PlacementClient({ grpc: raw });
});
afterAll(async () => {
  raw.close();
  await server.shutdown();
  await h.close();
});

const node = (vcpus = 4): Promise<ProviderRef> =>
  b.provider(`cn-${randomUUID().slice(0, 8)}`, { inventories: { VCPU: { total: vcpus }, MEMORY_MB: { total: 4096 } } });
const consumer = (uuid: string, rp: ProviderRef, vcpu: number, memory = 512): ConsumerAllocations => ({
  consumerUuid: uuid,
  projectId: 'p1',
  userId: 'u1',
  consumerType: '',
  allocations: [{ resourceProviderUuid: rp.uuid, resources: { VCPU: vcpu, MEMORY_MB: memory } }],
});

/** `{provider uuid: {class: amount}}` the consumer holds. */
async function held(c: string): Promise<Record<string, Record<string, number>>> {
  const r = await h.db.pool.query<{ u: string; rc: string; used: number }>(
    `SELECT rp.uuid::text AS u, rc.name AS rc, a.used FROM allocations a
    JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id WHERE a.consumer_id = $1`,
    [c],
  );
  const out: Record<string, Record<string, number>> = {};
  for (const row of r.rows) out[row.u] = { ...(out[row.u] ?? {}), [row.rc]: row.used };
  return out;
}

async function booted(rp: ProviderRef, vcpu = 1): Promise<string> {
  const inst = randomUUID();
  expect((await client.claim(consumer(inst, rp, vcpu), { replace: true })).kind).toBe('claimed');
  return inst;
}

test('ClaimMove: the source goes to the migration and the destination to the instance, in one write; a retry and the next alternate only re-point the destination', async () => {
  const [src, dst, alt] = [await node(), await node(), await node()];
  const inst = await booted(src);
  const mig = randomUUID();
  const first = await client.claimMove(consumer(inst, dst, 2, 1024), mig);
  expect(first).toMatchObject({ kind: 'claimed', sourceMoved: true });
  expect(await held(inst)).toEqual({ [dst.uuid]: { VCPU: 2, MEMORY_MB: 1024 } });
  expect(await held(mig)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  // the migration consumer belongs to the instance's project and user
  const refs = await h.db.pool.query<{ p: string; u: string }>(
    'SELECT p.external_id AS p, u.external_id AS u FROM consumers c JOIN projects p ON p.id = c.project_id JOIN users u ON u.id = c.user_id WHERE c.uuid = $1',
    [mig],
  );
  expect(refs.rows).toEqual([{ p: 'p1', u: 'u1' }]);
  // redelivered: nothing moves twice
  expect(await client.claimMove(consumer(inst, dst, 2, 1024), mig)).toMatchObject({ kind: 'claimed', sourceMoved: false });
  expect(await held(mig)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  // the destination failed: the next alternate; the migration still holds the source
  expect(await client.claimMove(consumer(inst, alt, 2, 1024), mig)).toMatchObject({ kind: 'claimed', sourceMoved: false });
  expect(await held(inst)).toEqual({ [alt.uuid]: { VCPU: 2, MEMORY_MB: 1024 } });
  expect(await held(mig)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  expect(await client.providerUsages(dst.uuid)).toEqual({ VCPU: 0, MEMORY_MB: 0 });
});

test('ClaimMove without room on the destination writes nothing: no_capacity, the instance still on its source', async () => {
  const [src, full] = [await node(), await node(2)];
  await booted(full, 2);
  const inst = await booted(src);
  const mig = randomUUID();
  const out = await client.claimMove(consumer(inst, full, 1), mig);
  expect(out).toMatchObject({ kind: 'no_capacity', providerUuid: full.uuid, resourceClass: 'VCPU' });
  expect(await held(inst)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  expect(await held(mig)).toEqual({});
});

test('a same-host resize needs room for the old and the new flavor together', async () => {
  const rp = await node(4);
  const inst = await booted(rp, 2);
  expect(await client.claimMove(consumer(inst, rp, 3), randomUUID())).toMatchObject({ kind: 'no_capacity' });
  expect(await held(inst)).toEqual({ [rp.uuid]: { VCPU: 2, MEMORY_MB: 512 } });
  const mig = randomUUID();
  expect(await client.claimMove(consumer(inst, rp, 2), mig)).toMatchObject({ kind: 'claimed', sourceMoved: true });
  expect(await client.providerUsages(rp.uuid)).toEqual({ VCPU: 4, MEMORY_MB: 1024 });
});

test('RevertMove: the migration allocation back to the instance in one write, the destination freed; again: nothing to revert', async () => {
  const [src, dst] = [await node(), await node()];
  const inst = await booted(src);
  const mig = randomUUID();
  await client.claimMove(consumer(inst, dst, 3), mig);
  expect(await client.revertMove(inst, mig)).toBe(true);
  expect(await held(inst)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  expect(await held(mig)).toEqual({});
  expect(await client.providerUsages(dst.uuid)).toEqual({ VCPU: 0, MEMORY_MB: 0 });
  expect(await client.revertMove(inst, mig)).toBe(false);
  expect(await held(inst)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  // confirm is a Release of the migration consumer
  const mig2 = randomUUID();
  await client.claimMove(consumer(inst, dst, 1), mig2);
  expect(await client.release([mig2])).toEqual([mig2]);
  expect(await held(inst)).toEqual({ [dst.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  expect(await client.providerUsages(src.uuid)).toEqual({ VCPU: 0, MEMORY_MB: 0 });
});

test('moves racing for the last slots of one destination: exactly as many winners as slots, losers untouched', async () => {
  const dst = await node(3);
  const moves = await Promise.all(Array.from({ length: 8 }, async () => ({ inst: await booted(await node()), mig: randomUUID() })));
  const outs = await Promise.all(moves.map((m) => client.claimMove(consumer(m.inst, dst, 1), m.mig)));
  expect(outs.filter((o) => o.kind === 'claimed')).toHaveLength(3);
  expect((await client.providerUsages(dst.uuid)).VCPU).toBe(3);
  for (const [i, m] of moves.entries()) {
    if (outs[i]?.kind === 'claimed') expect(Object.keys(await held(m.mig))).toHaveLength(1);
    else expect(await held(m.mig)).toEqual({});
  }
});

test('ClaimMove keeps an anti-affinity group: a destination holding another member is refused, nothing written', async () => {
  const [src, dst] = [await node(), await node()];
  const group = { uuid: randomUUID(), policy: 'anti-affinity', maxServerPerHost: 0 };
  const other = randomUUID();
  expect((await client.claim(consumer(other, dst, 1), { replace: true, group })).kind).toBe('claimed');
  const inst = randomUUID();
  expect((await client.claim(consumer(inst, src, 1), { replace: true, group })).kind).toBe('claimed');
  const mig = randomUUID();
  expect(await client.claimMove(consumer(inst, dst, 1), mig, group)).toMatchObject({ kind: 'group_policy', providerUuid: dst.uuid });
  expect(await held(inst)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
  expect(await held(mig)).toEqual({});
});

test('bad input is INVALID_ARGUMENT (placement.request.invalid) and writes nothing', async () => {
  const src = await node();
  const inst = await booted(src);
  const bad = async (p: Promise<unknown>): Promise<string> => {
    try {
      await p;
      return 'ok';
    } catch (err) {
      if (!(err instanceof FailureError)) throw err;
      expect(err.status).toBe(GrpcStatus.INVALID_ARGUMENT);
      return err.code;
    }
  };
  expect(await bad(raw.claimMove({ destination: consumer(inst, src, 1), migrationUuid: 'nope', group: undefined }))).toBe(
    'placement.request.invalid',
  );
  expect(
    await bad(
      raw.claimMove({ destination: { ...consumer(inst, src, 1), allocations: [] }, migrationUuid: randomUUID(), group: undefined }),
    ),
  ).toBe('placement.request.invalid');
  expect(await bad(raw.claimMove({ destination: consumer(inst, src, 1), migrationUuid: inst, group: undefined }))).toBe(
    'placement.request.invalid',
  );
  expect(await bad(raw.revertMove({ instanceUuid: inst, migrationUuid: 'x' }))).toBe('placement.request.invalid');
  expect(await held(inst)).toEqual({ [src.uuid]: { VCPU: 1, MEMORY_MB: 512 } });
});
