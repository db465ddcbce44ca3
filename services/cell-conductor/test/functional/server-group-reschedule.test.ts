/**
 * The in-cell reschedule keeps the instance's server group policy (real PostgreSQL, RabbitMQ,
 * placement child process, the cell conductor in-process, simulated computes in-process): the
 * conductor's replace-claim carries the group from the instance's RequestSpec, so placement
 * refuses an alternate that another member took after the scheduler chose it (the conductor then
 * tries the next one, or ends in ERROR with a fault that names the group), without any call to the
 * API level. Each test plays the scheduler and super-conductor (claims with the group, creates the
 * instance with its RequestSpec) and the other members' schedulers (their claims).
 */
import { randomUUID } from 'node:crypto';
import { createInstance, getInstance, listInstanceActions, listInstanceFaults, type InstanceRecord } from '@cellsched/cell-db';
import type { TestDatabase } from '@cellsched/db';
import { instanceConsumer, parseAllocationRequest, PlacementClient } from '@cellsched/placement-client';
import { ComputeServiceService, RequestSpec, type ConsumerGroup, type InstanceGroup, type Selection } from '@cellsched/wire';
import type { RunningCellConductor } from '../../src/app';
import { CellFixture } from './cell-fixture';
import type { TestCompute } from './compute-support';
import { Bus, createVhost, FLAVOR, selectionFor, waitFor, type PlacementProcess } from './harness';

let CELL: string;
let cellDb: TestDatabase;
let vhost: Awaited<ReturnType<typeof createVhost>>;
let placementProc: PlacementProcess;
let placement: PlacementClient;
let bus: Bus;
let conductor: RunningCellConductor;
let good: TestCompute;
let bad: TestCompute;

let cell: CellFixture;

beforeAll(async () => {
  cell = await CellFixture.start({ vhostPrefix: 'cstest-ccgrp', build: true });
  ({ cellDb, vhost, placementProc, placement, bus } = cell);
  CELL = cell.cellUuid;
  conductor = cell.conductor;
  good = await cell.addCompute('good-', 3);
  bad = await cell.addCompute('bad-', 1);
  bad.running.control.update({ rescheduleRate: 1, abortRate: 0 });
}, 120_000);

afterAll(async () => {
  await cell?.stop();
});

const sel = (c: TestCompute, i: number): Selection => {
  const h = c.hosts[i];
  if (h === undefined) throw new Error('no such host');
  return selectionFor(h.host, h.computeNodeUuid, CELL);
};

const group = (policy: string): InstanceGroup => ({ uuid: randomUUID(), policy, hosts: [], members: [], maxServerPerHost: 0 });
const wireGroup = (g: InstanceGroup): ConsumerGroup => ({ uuid: g.uuid, policy: g.policy, maxServerPerHost: g.maxServerPerHost });

/** Another member's scheduler claims `s` for it, with the group (as the scheduler's claims carry it). */
async function memberOn(g: InstanceGroup, s: Selection): Promise<string> {
  const uuid = randomUUID();
  const r = await placement.claim(
    instanceConsumer({ uuid, projectId: 'p1', userId: 'u1' }, parseAllocationRequest(s.allocationRequest?.json ?? '')),
    { replace: true, group: wireGroup(g) },
  );
  expect(r.kind).toBe('claimed');
  return uuid;
}

/** The scheduler's claim of the chosen host (with the group), the instance created with its RequestSpec, the build cast; waits until it settles. */
async function boot(g: InstanceGroup, hostList: Selection[]): Promise<InstanceRecord> {
  const uuid = randomUUID();
  const [chosen, ...alternates] = hostList as [Selection, ...Selection[]];
  const claim = await placement.claim(
    instanceConsumer({ uuid, projectId: 'p1', userId: 'u1' }, parseAllocationRequest(chosen.allocationRequest?.json ?? '')),
    { replace: true, group: wireGroup(g) },
  );
  expect(claim.kind).toBe('claimed');
  const spec = RequestSpec.fromPartial({
    instanceUuid: uuid,
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    numInstances: 1,
    instanceGroup: g,
  });
  const { instance } = await createInstance(cellDb.pool, {
    uuid,
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    vmState: 'building',
    taskState: 'scheduling',
    host: chosen.serviceHost,
    node: chosen.nodename,
    buildHostList: alternates,
    buildRequestSpec: spec,
  });
  await bus.castClient(ComputeServiceService).cast(
    'buildAndRunInstance',
    {
      instance: {
        uuid,
        projectId: 'p1',
        userId: 'u1',
        displayName: '',
        flavor: instance.flavor,
        imageRef: '',
        vmState: 1,
        taskState: 'scheduling',
        host: chosen.serviceHost,
        node: chosen.nodename,
        availabilityZone: '',
        cellUuid: CELL,
        createdAt: undefined,
        launchedAt: undefined,
        reservationId: '',
        launchIndex: 0,
      },
      requestSpec: spec,
      hostList,
      attempt: 1,
      requestId: `req-${uuid}`,
    },
    { server: chosen.serviceHost },
  );
  return waitFor(`instance ${uuid} settled`, async () => {
    const i = await getInstance(cellDb.pool, uuid);
    return i !== undefined && i.vmState !== 'building' ? i : undefined;
  });
}

async function allocatedProviders(uuid: string): Promise<string[]> {
  return ((await placement.consumerAllocations(uuid))?.allocations ?? []).map((a) => a.resourceProviderUuid);
}

test('anti-affinity: an alternate another member took meanwhile is skipped, the next one is used', async () => {
  const g = group('anti-affinity');
  await memberOn(g, sel(good, 0)); // took good-1, the first alternate, after the scheduler chose it
  const inst = await boot(g, [sel(bad, 0), sel(good, 0), sel(good, 1)]);
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-2', buildAttempt: 2 });
  expect(await allocatedProviders(inst.uuid)).toEqual([good.hosts[1]?.computeNodeUuid]);
  const events = (await listInstanceActions(cellDb.pool, inst.uuid))[0]?.events ?? [];
  expect(events.find((e) => e.event === 'conductor_reschedule_build')).toMatchObject({ host: 'good-2', result: 'Success' });
});

test('anti-affinity: every alternate taken by other members ends in ERROR with a fault naming the group, no allocation left', async () => {
  const g = group('anti-affinity');
  await memberOn(g, sel(good, 0));
  await memberOn(g, sel(good, 1));
  const inst = await boot(g, [sel(bad, 0), sel(good, 0), sel(good, 1)]);
  expect(inst).toMatchObject({ vmState: 'error', taskState: null });
  expect(await placement.consumerAllocations(inst.uuid)).toBeUndefined();
  const [fault] = await listInstanceFaults(cellDb.pool, inst.uuid);
  expect(fault?.message).toBe(
    `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${inst.uuid}.`,
  );
  expect(fault?.details).toContain(
    `good-1: Unable to claim for consumer ${inst.uuid}: server group ${g.uuid} has the anti-affinity policy`,
  );
  expect(fault?.details).toContain(
    `good-2: Unable to claim for consumer ${inst.uuid}: server group ${g.uuid} has the anti-affinity policy`,
  );
});

test('affinity: a member joined the failed host meanwhile, so no alternate elsewhere is taken: ERROR, the group is never split', async () => {
  const g = group('affinity');
  const inst = await boot(g, [sel(bad, 0), sel(good, 2)]);
  // the first member failed on bad-1 and went to good-3 alone: allowed (no other member yet)
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-3' });
  const g2 = group('affinity');
  const member = await memberOn(g2, sel(bad, 0)); // a member already on bad-1 with it
  const second = await boot(g2, [sel(bad, 0), sel(good, 2)]);
  expect(second).toMatchObject({ vmState: 'error' });
  expect((await listInstanceFaults(cellDb.pool, second.uuid))[0]?.details).toContain(
    `has the affinity policy and its member ${member} is on compute node 'bad-1'`,
  );
  expect(await placement.consumerAllocations(second.uuid)).toBeUndefined();
});

test('a group without an enforced policy (soft-anti-affinity) reschedules as before', async () => {
  const g = group('soft-anti-affinity');
  await memberOn(g, sel(good, 0));
  const inst = await boot(g, [sel(bad, 0), sel(good, 0)]);
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-1' });
});
