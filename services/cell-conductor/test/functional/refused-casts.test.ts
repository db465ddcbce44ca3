/**
 * Casts that cannot be delivered, at the cell level, against real PostgreSQL, RabbitMQ and
 * placement: a build cast to a host no compute serves (the broker refuses it, or it reaches a
 * pool that stopped serving that host) is that host's failure for the request — the next
 * alternate is claimed and built, or the instance ends in ERROR with a fault naming the host;
 * a build on a host whose service is gone is moved on by the watchdog at once.
 */
import { randomUUID } from 'node:crypto';
import {
  getInstance,
  listComputeNodes,
  listInstanceActions,
  listInstanceFaults,
  listServices,
  startInstanceAction,
  type InstanceRecord,
} from '@cellsched/cell-db';
import type { TestDatabase } from '@cellsched/db';
import type { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { ComputeServiceService, type Selection } from '@cellsched/wire';
import type { RunningCellConductor } from '../../src/app';
import { startSimulatedComputeForTest, type TestCompute } from './compute-support';
import { CellFixture } from './cell-fixture';
import { Bus, createVhost, rabbitmqctl, selectionFor, superConductorStep, waitFor } from './harness';

let cellDb: TestDatabase;
let vhost: Awaited<ReturnType<typeof createVhost>>;
let placement: PlacementClient;
let report: ReportClient;
let bus: Bus;
let conductor: RunningCellConductor;
let good: TestCompute;
let bad: TestCompute;
/** Hosts registered (cell DB, placement) whose compute process is gone along with its queue: casts to them are unroutable. */
let gone: TestCompute;

async function deleteQueue(queue: string): Promise<void> {
  await rabbitmqctl('delete_queue', '-p', vhost.name, queue);
}

let cell: CellFixture;

beforeAll(async () => {
  cell = await CellFixture.start({ vhostPrefix: 'cstest-refused' });
  ({ cellDb, vhost, placement, report, bus } = cell);
  conductor = cell.conductor;
  good = await cell.addCompute('good-', 2);
  bad = await cell.addCompute('bad-', 1);
  bad.running.control.update({ rescheduleRate: 1 });
  gone = await startSimulatedComputeForTest({ url: vhost.url, report, cell: 'c1', prefix: 'gone-', hosts: 2 });
  await waitFor('the gone hosts registered', async () => ((await listServices(cellDb.pool)).length === 5 ? true : undefined));
  await gone.running.stop();
  await deleteQueue(gone.running.queue);
}, 120_000);

afterAll(async () => {
  await cell?.stop();
});

const sel = (c: TestCompute, i: number): Selection => {
  const h = c.hosts[i];
  if (h === undefined) throw new Error('no such host');
  return selectionFor(h.host, h.computeNodeUuid, cell.cellUuid);
};

/** Plays the super-conductor (claim, create, cast the build to the first host), then waits until the instance settles. */
async function boot(hostList: Selection[]): Promise<InstanceRecord> {
  const uuid = randomUUID();
  const inst = await superConductorStep(cellDb, placement, uuid, hostList);
  await bus.castClient(ComputeServiceService).cast(
    'buildAndRunInstance',
    {
      instance: {
        uuid,
        projectId: 'p1',
        userId: 'u1',
        displayName: '',
        flavor: inst.flavor,
        imageRef: '',
        vmState: 1,
        taskState: 'scheduling',
        host: inst.host ?? '',
        node: inst.node ?? '',
        availabilityZone: '',
        cellUuid: cell.cellUuid,
        createdAt: undefined,
        launchedAt: undefined,
        reservationId: '',
        launchIndex: 0,
      },
      requestSpec: undefined,
      hostList,
      attempt: 1,
      requestId: `req-${uuid}`,
    },
    { server: hostList[0]?.serviceHost ?? '' },
  );
  return settled(uuid);
}

async function settled(uuid: string): Promise<InstanceRecord> {
  return waitFor(`instance ${uuid} settled`, async () => {
    const i = await getInstance(cellDb.pool, uuid);
    return i !== undefined && i.vmState !== 'building' ? i : undefined;
  });
}

async function events(uuid: string): Promise<string[][]> {
  const evs = (await listInstanceActions(cellDb.pool, uuid))[0]?.events ?? [];
  return evs.map((e) => [e.event, e.host ?? '', e.result ?? '', e.details ?? '']);
}

test('a reschedule onto an alternate whose cast the broker refuses goes on to the next alternate, which builds it', async () => {
  const inst = await boot([sel(bad, 0), sel(gone, 0), sel(good, 0)]);
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-1', buildAttempt: 3 });
  expect((await placement.consumerAllocations(inst.uuid))?.allocations.map((a) => a.resourceProviderUuid)).toEqual([
    good.hosts[0]?.computeNodeUuid,
  ]);
  const failed = (await events(inst.uuid)).filter((e) => e[0] === 'compute__do_build_and_run_instance' && e[2] === 'Error');
  expect(failed.map((e) => e[1]).sort()).toEqual(['bad-1', 'gone-1']);
  expect(failed.find((e) => e[1] === 'gone-1')?.[3]).toContain('no compute serves host gone-1');
});

test('when every alternate is refused the instance ends in ERROR with a fault naming the refused host, holding nothing', async () => {
  const inst = await boot([sel(bad, 0), sel(gone, 0), sel(gone, 1)]);
  expect(inst).toMatchObject({ vmState: 'error', taskState: null });
  expect(await placement.consumerAllocations(inst.uuid)).toBeUndefined();
  const [fault] = await listInstanceFaults(cellDb.pool, inst.uuid);
  expect(fault?.message).toContain('Exceeded maximum number of retries');
  expect(fault?.details).toContain('last failure on gone-2');
  expect(fault?.details).toContain('no compute serves host gone-2');
});

test('a build queued for a host its pool stopped serving is reported by that pool and moves to the alternate', async () => {
  const shrink = await startSimulatedComputeForTest({ url: vhost.url, report, cell: 'c1', prefix: 'shrink-', hosts: 2 });
  await waitFor('shrink hosts registered', async () =>
    (await listComputeNodes(cellDb.pool, { host: 'shrink-2' })).length === 1 ? true : undefined,
  );
  const hosts = shrink.hosts;
  await shrink.running.stop();
  // the process comes back simulating shrink-1 only (same pool queue): shrink-2's key is still bound to it
  const uuid = randomUUID();
  const list = [selectionFor('shrink-2', hosts[1]?.computeNodeUuid ?? '', cell.cellUuid), sel(good, 1)];
  const inst = await superConductorStep(cellDb, placement, uuid, list);
  await bus.castClient(ComputeServiceService).cast(
    'buildAndRunInstance',
    {
      instance: {
        uuid,
        projectId: 'p1',
        userId: 'u1',
        displayName: '',
        flavor: inst.flavor,
        imageRef: '',
        vmState: 1,
        taskState: 'scheduling',
        host: 'shrink-2',
        node: 'shrink-2',
        availabilityZone: '',
        cellUuid: cell.cellUuid,
        createdAt: undefined,
        launchedAt: undefined,
        reservationId: '',
        launchIndex: 0,
      },
      requestSpec: undefined,
      hostList: list,
      attempt: 1,
      requestId: `req-${uuid}`,
    },
    { server: 'shrink-2' },
  );
  const smaller = await startSimulatedComputeForTest({ url: vhost.url, report, cell: 'c1', prefix: 'shrink-', hosts: 1 });
  try {
    const done = await settled(uuid);
    expect(done).toMatchObject({ vmState: 'active', host: 'good-2', buildAttempt: 2 });
    const failed = (await events(uuid)).find((e) => e[0] === 'compute__do_build_and_run_instance' && e[1] === 'shrink-2');
    expect(failed?.[2]).toBe('Error');
    expect(failed?.[3]).toContain('host shrink-2 is not served by any compute process');
  } finally {
    await smaller.running.stop();
  }
});

test('the watchdog moves a build off a host whose service was deleted or forced down at once, without waiting for its deadline', async () => {
  // builds "cast" to their host that never arrive (nothing is sent): only the watchdog can move them
  const onDeleted = randomUUID();
  await superConductorStep(cellDb, placement, onDeleted, [sel(good, 0), sel(good, 1)]);
  const onForcedDown = randomUUID();
  await superConductorStep(cellDb, placement, onForcedDown, [sel(bad, 0)]);
  await cellDb.pool.query("UPDATE instances SET build_deadline_at = now() + interval '1 hour' WHERE uuid IN ($1, $2)", [
    onDeleted,
    onForcedDown,
  ]);
  for (const uuid of [onDeleted, onForcedDown])
    await startInstanceAction(cellDb.pool, {
      instanceUuid: uuid,
      requestId: `req-${uuid}`,
      action: 'create',
      userId: 'u1',
      projectId: 'p1',
    });
  expect(await conductor.runWatchdog()).toBe(0); // the hosts are up and the deadlines an hour away
  await cellDb.pool.query("UPDATE services SET deleted_at = now() WHERE host = 'good-1'");
  await cellDb.pool.query("UPDATE services SET forced_down = true WHERE host = 'bad-1'");
  try {
    expect(await conductor.runWatchdog()).toBe(2);
    expect(await settled(onDeleted)).toMatchObject({ vmState: 'active', host: 'good-2', buildAttempt: 2 });
    expect((await events(onDeleted)).find((e) => e[1] === 'good-1')?.[3]).toContain(
      'host good-1 is gone (its compute service was deleted or forced down)',
    );
    expect(await settled(onForcedDown)).toMatchObject({ vmState: 'error' });
    expect(await placement.consumerAllocations(onForcedDown)).toBeUndefined();
    expect((await listInstanceFaults(cellDb.pool, onForcedDown))[0]?.details).toContain('host bad-1 is gone');
    expect(await conductor.runWatchdog()).toBe(0);
  } finally {
    await cellDb.pool.query("UPDATE services SET deleted_at = NULL, forced_down = false WHERE host IN ('good-1', 'bad-1')");
  }
});
