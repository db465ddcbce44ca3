// The super-conductor's server_action against the real thing: PostgreSQL (API DB, two cells,
// placement), the real placement gRPC service with ClaimMove/RevertMove, a real scheduler
// replica, and RabbitMQ (the cell's own vhost, where a stand-in cell conductor receives the
// instance_action casts). Migrate scheduled, NoValidHost, stop forwarded, a refused guard,
// redelivery and a re-cast (with the alternates), a cast the broker refuses.
import { randomUUID } from 'node:crypto';
import { getRequestSpec, getServerTaskIntent, recordServerTaskIntent, saveRequestSpec } from '@cellsched/api-db';
import { Bus, type CastContext, type CastSubscription } from '@cellsched/bus';
import {
  createInstance,
  getInstance,
  getInstanceAction,
  listInstanceFaults,
  listMigrations,
  updateInstance,
  updateMigrationStatus,
  type VmStateName,
} from '@cellsched/cell-db';
import { PlacementClient } from '@cellsched/placement-client';
import { CellConductorServiceService, ComputeServiceService, type InstanceActionRequest, type ServerActionRequest } from '@cellsched/wire';
import pino from 'pino';
import { createVhost, waitFor, type TestVhost } from '../../../../packages/bus/test/support/broker';
import { placementUsage, type SeededHost } from '../../../../e2e/bench/scheduler/seed';
import { requestSpec, select, startRealCloud, type RealCloud, type SchedulerClient } from '../../../scheduler/test/support/real-cloud';
import { CellRegistry, type CellHandle } from '../../src/adapters/cells';
import { GrpcDestinationSelector } from '../../src/adapters/scheduler-selector';
import { serverActionHandler } from '../../src/adapters/server-action-handler';

const log = pino({ level: 'silent' });
const ctx = { logger: log } as unknown as CastContext;
let cloud: RealCloud;
let client: SchedulerClient;
let hosts: SeededHost[];
let vhost: TestVhost;
let emptyVhost: TestVhost;
let superBus: Bus;
let emptyBus: Bus;
let cellConductorBus: Bus;
let sub: CastSubscription;
let placement: PlacementClient;
let selector: GrpcDestinationSelector;
let handle: { -readonly [K in keyof CellHandle]: CellHandle[K] };
let handler: ReturnType<typeof serverActionHandler>;
const received: InstanceActionRequest[] = [];
const size = { vcpus: 4, memoryMb: 8192, diskGb: 100 };

beforeAll(async () => {
  cloud = await startRealCloud('i13sched_sa');
  // NOTE: heartbeats an hour ahead: on a loaded machine this setup can outlast service_down_time (the ComputeFilter would call every host down)
  const lastSeenUp = new Date(Date.now() + 3_600_000);
  hosts = await cloud.addHosts([0, 0, 0, 1].map((cell, i) => ({ host: `sa-${i}`, cell, ...size, lastSeenUp })));
  ({ client } = await cloud.startReplica());
  [vhost, emptyVhost] = await Promise.all([createVhost('i13sched-sa-cell1'), createVhost('i13sched-sa-none')]);
  cellConductorBus = await Bus.connect({ url: vhost.url, logger: log, name: 'cell-conductor' });
  sub = await cellConductorBus.serve(CellConductorServiceService, {
    instanceAction: async (req) => {
      received.push(req);
    },
  });
  superBus = await Bus.connect({ url: vhost.url, logger: log, name: 'super-conductor-cell1' });
  emptyBus = await Bus.connect({ url: emptyVhost.url, logger: log, name: 'super-conductor-nowhere' });
  const cell1 = cloud.cells[0] as RealCloud['cells'][number];
  handle = {
    uuid: cell1.uuid,
    name: 'cell1',
    pool: cell1.db.pool,
    compute: superBus.castClient(ComputeServiceService),
    conductor: superBus.castClient(CellConductorServiceService),
  };
  const cells = CellRegistry.fixed(cloud.apiDb.pool, [handle]);
  await cells.refresh();
  placement = new PlacementClient({ addresses: [cloud.placement.address] });
  selector = new GrpcDestinationSelector({ addresses: [(await cloud.startReplica()).app.server.address], deadlineMs: 30_000, logger: log });
  handler = serverActionHandler({
    apiDb: cloud.apiDb.pool,
    cells,
    selector,
    claims: {
      release: async (u) => {
        await placement.release(u);
      },
      revertMove: async (i, m) => {
        await placement.revertMove(i, m);
      },
    },
    settings: { conductorHost: 'sc-test', numAlternates: 2, allowResizeToSameHost: false },
  });
}, 120_000);

afterAll(async () => {
  selector?.close();
  placement?.close();
  await sub?.close();
  for (const b of [cellConductorBus, superBus, emptyBus]) await b?.close();
  for (const v of [vhost, emptyVhost]) await v?.dispose();
  await cloud?.close();
});

beforeEach(() => {
  received.length = 0;
});

const cell1 = (): RealCloud['cells'][number] => cloud.cells[0] as RealCloud['cells'][number];

/** A server booted into cell1 as the boot flow leaves it: claimed in placement, ACTIVE on its host, its RequestSpec in the API DB. */
async function bootedServer(vmState: VmStateName = 'active'): Promise<{ uuid: string; host: SeededHost }> {
  const uuid = randomUUID();
  const spec = requestSpec({
    instanceUuid: uuid,
    requestedDestination: { host: '', node: '', cellUuid: cell1().uuid, aggregates: [], allowCrossCellMove: false },
  });
  const r = await select(client, spec, [uuid]);
  if (!r.ok) throw r.err;
  const chosen = r.res.destinations[0]?.selections[0];
  const host = hosts.find((h) => h.uuid === chosen?.computeNodeUuid) as SeededHost;
  await saveRequestSpec(cloud.apiDb.pool, { ...spec, requestedDestination: undefined });
  // NOTE: the flavor as the api records it, with its integer id (a migration keeps it as old/new_instance_type_id)
  await createInstance(cell1().db.pool, {
    uuid,
    projectId: 'p1',
    userId: 'u1',
    flavor: { ...spec.flavor, id: 7 } as never,
    vmState,
    host: host.host,
    node: host.host,
    availabilityZone: 'nova',
  });
  return { uuid, host };
}

/** What the API does: records the intent, then casts (here: calls the handler as the bus would). */
async function act(uuid: string, action: string, extra: Partial<ServerActionRequest> = {}): Promise<ServerActionRequest> {
  const req: ServerActionRequest = {
    instanceUuid: uuid,
    cellUuid: cell1().uuid,
    action,
    requestId: `req-${randomUUID()}`,
    userId: 'u1',
    projectId: 'p1',
    taskState: '',
    rebootType: '',
    flavor: undefined,
    host: '',
    imageRef: '',
    blockMigration: '',
    availabilityZone: '',
    displayName: '',
    force: false,
    expiredAfterS: 0,
    ...extra,
  };
  expect(
    await recordServerTaskIntent(cloud.apiDb.pool, { instanceUuid: uuid, action, taskState: null, requestId: req.requestId, request: {} }),
  ).toEqual({ recorded: true });
  await handler(req, ctx);
  return req;
}

const eventsOf = async (uuid: string, requestId: string) =>
  (await getInstanceAction(cell1().db.pool, uuid, requestId))?.events.map((e) => [e.event, e.host, e.result]);

test('migrate: migration pre-migrating with its destination, instance_action on the cell bus, placement holds the instance on the destination and the migration on the source', async () => {
  const vm = await bootedServer();
  const req = await act(vm.uuid, 'migrate');
  const [cast] = await waitFor('the instance_action cast', () => (received.length > 0 ? received : undefined));
  const [migration, ...others] = await listMigrations(cell1().db.pool, vm.uuid);
  expect(others).toEqual([]);
  expect(migration).toMatchObject({
    migrationType: 'migration',
    status: 'pre-migrating',
    sourceCompute: vm.host.host,
    oldInstanceTypeId: 7,
    newInstanceTypeId: 7,
  });
  expect(migration?.destCompute).not.toBe(vm.host.host);
  expect(cast).toMatchObject({
    instanceUuid: vm.uuid,
    action: 'migrate',
    requestId: req.requestId,
    migrationUuid: migration?.uuid,
    newFlavor: { name: 'm1.tiny' },
  });
  expect(cast?.hostList[0]?.serviceHost).toBe(migration?.destCompute);
  expect(cast?.hostList.map((s) => s.cellUuid)).toEqual(cast?.hostList.map(() => cell1().uuid));
  expect(cast?.hostList).toHaveLength(2); // 3 hosts in cell1: the source, the destination, one alternate
  const dest = hosts.find((h) => h.host === migration?.destCompute) as SeededHost;
  const usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([dest.uuid]);
  expect(usage.consumers.get(migration?.uuid ?? '')).toEqual([vm.host.uuid]);
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'active', taskState: 'resize_prep', host: vm.host.host });
  expect(await eventsOf(vm.uuid, req.requestId)).toEqual([
    ['conductor_migrate_server', 'sc-test', 'Success'],
    ['cold_migrate', 'sc-test', 'Success'],
  ]);
  expect(await getServerTaskIntent(cloud.apiDb.pool, vm.uuid)).toBeUndefined();

  // a redelivery of the cast changes nothing; the API's re-cast of the same request (its intent back, as after a crash before the
  // cast) casts the recorded host list again, alternates and their allocation requests included, so the cell can still retry
  await handler(req, ctx);
  await recordServerTaskIntent(cloud.apiDb.pool, {
    instanceUuid: vm.uuid,
    action: 'migrate',
    taskState: 'resize_prep',
    requestId: req.requestId,
    request: {},
  });
  await handler(req, ctx);
  await waitFor('the re-cast', () => (received.length === 2 ? true : undefined));
  expect(received[1]?.hostList).toEqual(cast?.hostList);
  expect(received[1]?.hostList[1]?.allocationRequest?.json).toContain(received[1]?.hostList[1]?.computeNodeUuid);
  expect(await listMigrations(cell1().db.pool, vm.uuid)).toHaveLength(1);
  const again = await placementUsage(cloud.placementDb.pool);
  expect([again.consumers.get(vm.uuid), again.consumers.get(migration?.uuid ?? '')]).toEqual([[dest.uuid], [vm.host.uuid]]);
  expect(again.overCapacity).toEqual([]);
});

test('resize then revert: the RequestSpec in the API DB has the new flavor after the resize is scheduled, the old one again once the revert is cast', async () => {
  const vm = await bootedServer();
  const small = { id: 2, flavorid: 'f2', name: 'm1.small', vcpus: 2, memoryMb: 1024, rootGb: 2, ephemeralGb: 0, swap: 0, extraSpecs: {} };
  await act(vm.uuid, 'resize', { flavor: small });
  await waitFor('the resize cast', () => (received.length > 0 ? true : undefined));
  expect((await getRequestSpec(cloud.apiDb.pool, vm.uuid))?.flavor?.name).toBe('m1.small');
  // the cell's part: VERIFY_RESIZE on the destination with the new flavor, the old one kept
  const [migration] = await listMigrations(cell1().db.pool, vm.uuid);
  const before = await getInstance(cell1().db.pool, vm.uuid);
  await updateInstance(cell1().db.pool, vm.uuid, {
    vmState: 'resized',
    taskState: null,
    host: migration?.destCompute ?? null,
    flavor: small,
    oldFlavor: before?.flavor ?? null,
    newFlavor: small,
  });
  await updateMigrationStatus(cell1().db.pool, migration?.uuid ?? '', 'finished');
  const revert = await act(vm.uuid, 'revertResize');
  await waitFor('the revert cast', () => (received.some((r) => r.requestId === revert.requestId) ? true : undefined));
  expect(await getRequestSpec(cloud.apiDb.pool, vm.uuid)).toMatchObject({ instanceUuid: vm.uuid, flavor: { name: 'm1.tiny', vcpus: 1 } });
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'resized', taskState: 'resize_reverting' });
  // no cell conductor carries the revert out here: give the room back for the other tests
  await placement.release([vm.uuid, migration?.uuid ?? '']);
});

test("NoValidHost (a host outside the instance's cell requested): migration error, task_state back, a fault with the diagnosis, placement untouched, no cast", async () => {
  const vm = await bootedServer();
  const elsewhere = hosts.find((h) => h.cell === 1) as SeededHost;
  const req = await act(vm.uuid, 'migrate', { host: elsewhere.host });
  const [migration] = await listMigrations(cell1().db.pool, vm.uuid);
  expect(migration).toMatchObject({ status: 'error', destCompute: null });
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'active', taskState: null });
  const [fault, ...more] = await listInstanceFaults(cell1().db.pool, vm.uuid);
  expect(more).toEqual([]);
  expect(fault?.message).toMatch(/^No valid host was found/);
  expect(fault?.details).toContain('requested_destination');
  expect(await eventsOf(vm.uuid, req.requestId)).toEqual([
    ['conductor_migrate_server', 'sc-test', 'Error'],
    ['cold_migrate', 'sc-test', 'Error'],
  ]);
  expect((await getInstanceAction(cell1().db.pool, vm.uuid, req.requestId))?.events[0]?.traceback).toMatch(/^No valid host was found/);
  const usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([vm.host.uuid]);
  expect(usage.consumers.has(migration?.uuid ?? '')).toBe(false);
  expect(await getServerTaskIntent(cloud.apiDb.pool, vm.uuid)).toBeUndefined();
  await handler(req, ctx); // redelivered: no second fault
  expect(await listInstanceFaults(cell1().db.pool, vm.uuid)).toHaveLength(1);
  await new Promise((r) => setTimeout(r, 200));
  expect(received).toEqual([]);
});

test("a forced evacuation: the requested host claimed directly (no alternate), the evacuation record has no flavor ids (Nova's API creates it without)", async () => {
  const vm = await bootedServer();
  const target = hosts.find((h) => h.cell === 0 && h.host !== vm.host.host) as SeededHost;
  await act(vm.uuid, 'evacuate', { host: target.host, force: true });
  const [cast] = await waitFor('the evacuate cast', () => (received.length > 0 ? received : undefined));
  expect(cast?.hostList.map((s) => s.serviceHost)).toEqual([target.host]);
  const [migration] = await listMigrations(cell1().db.pool, vm.uuid);
  expect(migration).toMatchObject({
    migrationType: 'evacuation',
    destCompute: target.host,
    oldInstanceTypeId: null,
    newInstanceTypeId: null,
  });
  expect((await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid)).toEqual([target.uuid]);
  await placement.release([vm.uuid, migration?.uuid ?? vm.uuid]); // NOTE: cell1's capacity back for the tests after
});

test('a request the api gave up on (expired_after_s) that no delivery took up: recorded as failed, the instance and placement unchanged, no cast', async () => {
  const vm = await bootedServer();
  const before = (await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid);
  const req = await act(vm.uuid, 'migrate', { expiredAfterS: 900 });
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'active', taskState: null, host: vm.host.host });
  expect(await getInstanceAction(cell1().db.pool, vm.uuid, req.requestId)).toMatchObject({ action: 'migrate', message: 'Error' });
  const events = (await getInstanceAction(cell1().db.pool, vm.uuid, req.requestId))?.events ?? [];
  expect(events.map((e) => [e.event, e.host, e.result])).toEqual([['conductor_migrate_server', 'sc-test', 'Error']]);
  expect(events[0]?.details).toMatch(/was never taken up: it was not applied within 900 seconds and was abandoned/);
  expect(events[0]?.traceback).toBe(events[0]?.details);
  expect((await listInstanceFaults(cell1().db.pool, vm.uuid))[0]?.details).toBe('super_conductor.action.expired');
  expect(await listMigrations(cell1().db.pool, vm.uuid)).toEqual([]);
  expect(await getServerTaskIntent(cloud.apiDb.pool, vm.uuid)).toBeUndefined();
  // the original cast delivered late (no intent any more) starts nothing
  await handler({ ...req, expiredAfterS: 0 }, ctx);
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ taskState: null });
  expect((await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid)).toEqual(before);
  await new Promise((r) => setTimeout(r, 200));
  expect(received).toEqual([]);
  await placement.release([vm.uuid]); // NOTE: cell1's capacity back for the tests after
});

test('stop is forwarded to the cell conductor as it is: powering-off, the action recorded, placement untouched', async () => {
  const vm = await bootedServer();
  const before = (await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid);
  const req = await act(vm.uuid, 'stop');
  const [cast] = await waitFor('the stop cast', () => (received.length > 0 ? received : undefined));
  expect(cast).toMatchObject({ instanceUuid: vm.uuid, action: 'stop', requestId: req.requestId, migrationUuid: '', hostList: [] });
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'active', taskState: 'powering-off' });
  expect(await getInstanceAction(cell1().db.pool, vm.uuid, req.requestId)).toMatchObject({
    action: 'stop',
    userId: 'u1',
    projectId: 'p1',
    message: null,
  });
  expect((await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid)).toEqual(before);
});

test('a refused guard (already stopped): the action recorded with its event in Error, no task_state, no cast, the intent cleared', async () => {
  const vm = await bootedServer('stopped');
  const req = await act(vm.uuid, 'stop');
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'stopped', taskState: null });
  expect(await getInstanceAction(cell1().db.pool, vm.uuid, req.requestId)).toMatchObject({ action: 'stop', message: 'Error' });
  expect(await eventsOf(vm.uuid, req.requestId)).toEqual([['compute_stop_instance', vm.host.host, 'Error']]);
  expect(await getServerTaskIntent(cloud.apiDb.pool, vm.uuid)).toBeUndefined();
  await new Promise((r) => setTimeout(r, 200));
  expect(received).toEqual([]);
});

test("a cast the broker refuses (no conductor queue on the cell's bus): the move is reverted in placement, migration error, task_state back, a fault", async () => {
  const vm = await bootedServer();
  const served = handle.conductor;
  handle.conductor = emptyBus.castClient(CellConductorServiceService);
  try {
    await act(vm.uuid, 'resize', {
      flavor: { id: 9, flavorid: 'f2', name: 'm1.small', vcpus: 2, memoryMb: 1024, rootGb: 2, ephemeralGb: 0, swap: 0, extraSpecs: {} },
    });
  } finally {
    handle.conductor = served;
  }
  const [migration] = await listMigrations(cell1().db.pool, vm.uuid);
  expect(migration).toMatchObject({ migrationType: 'resize', status: 'error', oldInstanceTypeId: 7, newInstanceTypeId: 9 });
  expect(await getInstance(cell1().db.pool, vm.uuid)).toMatchObject({ vmState: 'active', taskState: null });
  expect((await listInstanceFaults(cell1().db.pool, vm.uuid))[0]?.details).toBe('super_conductor.action.unroutable');
  const usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([vm.host.uuid]);
  expect(usage.consumers.has(migration?.uuid ?? '')).toBe(false);
});
