/**
 * The cell level of the boot flow against real PostgreSQL, RabbitMQ and placement: the
 * cell conductor in-process, simulated computes in-process (and one as a child process to
 * SIGKILL). Each test plays the super-conductor (claim the chosen host, create the instance,
 * cast build_and_run_instance) and checks the cell DB and placement at the end.
 */
import { randomUUID } from 'node:crypto';
import {
  destroyInstance,
  getInstance,
  listComputeNodes,
  listInstanceActions,
  listInstanceFaults,
  listServices,
  type InstanceRecord,
} from '@cellsched/cell-db';
import type { TestDatabase } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { ComputeServiceService, type Selection } from '@cellsched/wire';
import { AllocationAudit } from '../../src/adapters/allocation-audit';
import type { RunningCellConductor } from '../../src/app';
import { CellFixture } from './cell-fixture';
import type { TestCompute } from './compute-support';
import {
  Bus,
  createVhost,
  selectionFor,
  startComputeChild,
  startPlacement,
  stopChild,
  superConductorStep,
  waitFor,
  type PlacementProcess,
} from './harness';

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
  cell = await CellFixture.start({ vhostPrefix: 'cstest-cc', build: true });
  ({ cellDb, vhost, placementProc, placement, bus } = cell);
  CELL = cell.cellUuid;
  conductor = cell.conductor;
  good = await cell.addCompute('good-', 2);
  bad = await cell.addCompute('bad-', 2);
}, 120_000);

afterAll(async () => {
  await cell?.stop();
});

const sel = (c: TestCompute, i: number): Selection => {
  const h = c.hosts[i];
  if (h === undefined) throw new Error('no such host');
  return selectionFor(h.host, h.computeNodeUuid, CELL);
};

async function boot(hostList: Selection[]): Promise<InstanceRecord> {
  const uuid = await startBoot(hostList);
  return waitFor(`instance ${uuid} settled`, async () => {
    const i = await getInstance(cellDb.pool, uuid);
    return i !== undefined && i.vmState !== 'building' ? i : undefined;
  });
}

/** Plays the super-conductor: claim, create the instance, cast the build. Returns the uuid. */
async function startBoot(hostList: Selection[]): Promise<string> {
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
        cellUuid: CELL,
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
  return uuid;
}

async function allocatedProviders(uuid: string): Promise<string[]> {
  return ((await placement.consumerAllocations(uuid))?.allocations ?? []).map((a) => a.resourceProviderUuid);
}

test('compute registration is visible in the cell DB (services, nodes) and placement (providers, inventory, traits)', async () => {
  const services = await listServices(cellDb.pool, { binary: 'nova-compute' });
  expect(services.map((s) => s.host).sort()).toEqual(['bad-1', 'bad-2', 'good-1', 'good-2']);
  await waitFor('heartbeats', async () => ((await listServices(cellDb.pool)).every((s) => s.reportCount > 0) ? true : undefined));
  const nodes = await listComputeNodes(cellDb.pool);
  expect(nodes.find((n) => n.host === 'good-1')).toMatchObject({
    uuid: good.hosts[0]?.computeNodeUuid,
    hypervisorHostname: 'good-1',
    vcpus: 4,
    memoryMb: 4096,
  });
  const rp = (await (
    await fetch(`${placementProc.restUrl}/resource_providers/${good.hosts[0]?.computeNodeUuid}/inventories`, {
      headers: { 'x-auth-token': 'admin' },
    })
  ).json()) as { inventories: Record<string, { total: number; reserved: number; allocation_ratio: number }> };
  expect(rp.inventories.VCPU).toMatchObject({ total: 4, reserved: 0, allocation_ratio: 4 });
  expect(rp.inventories.MEMORY_MB).toMatchObject({ total: 4096, reserved: 512 });
  const named = (await (
    await fetch(`${placementProc.restUrl}/resource_providers?name=good-1`, { headers: { 'x-auth-token': 'admin' } })
  ).json()) as { resource_providers: { uuid: string }[] };
  expect(named.resource_providers.map((p) => p.uuid)).toEqual([good.hosts[0]?.computeNodeUuid]);
});

test('a build succeeds: ACTIVE on the chosen host, allocation there, action event Success', async () => {
  const inst = await boot([sel(good, 0), sel(good, 1)]);
  expect(inst).toMatchObject({ vmState: 'active', taskState: null, host: 'good-1', node: 'good-1' });
  expect(inst.launchedAt).not.toBeNull();
  expect(await allocatedProviders(inst.uuid)).toEqual([good.hosts[0]?.computeNodeUuid]);
  const [action] = await listInstanceActions(cellDb.pool, inst.uuid);
  expect(action?.events.map((e) => [e.event, e.host, e.result])).toEqual([['compute__do_build_and_run_instance', 'good-1', 'Success']]);
  expect(good.running.guests.snapshot()['good-1']).toContain(inst.uuid);
});

test('a reschedulable failure moves the build and the allocation to the next alternate in the cell', async () => {
  bad.running.control.update({ rescheduleRate: 1, abortRate: 0 });
  const inst = await boot([sel(bad, 0), sel(good, 1)]);
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-2', buildAttempt: 2 });
  expect(await allocatedProviders(inst.uuid)).toEqual([good.hosts[1]?.computeNodeUuid]);
  const events = (await listInstanceActions(cellDb.pool, inst.uuid))[0]?.events ?? [];
  expect(events.map((e) => [e.event, e.host, e.result]).sort()).toEqual(
    [
      ['compute__do_build_and_run_instance', 'bad-1', 'Error'],
      ['compute__do_build_and_run_instance', 'good-2', 'Success'],
      ['conductor_reschedule_build', 'good-2', 'Success'],
    ].sort(),
  );
  expect(events.find((e) => e.event === 'conductor_reschedule_build')?.details).toContain('build on host bad-1 failed');
});

test('all alternates failing ends in ERROR "max retries exceeded" with no allocation left', async () => {
  bad.running.control.update({ rescheduleRate: 1, abortRate: 0 });
  const inst = await boot([sel(bad, 0), sel(bad, 1)]);
  expect(inst).toMatchObject({ vmState: 'error', taskState: null });
  expect(await placement.consumerAllocations(inst.uuid)).toBeUndefined();
  const [fault] = await listInstanceFaults(cellDb.pool, inst.uuid);
  expect(fault?.message).toBe(
    `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${inst.uuid}.`,
  );
});

test('a non-reschedulable failure ends in ERROR with the fault and no allocation, alternates untouched', async () => {
  bad.running.control.update({ rescheduleRate: 0, abortRate: 1 });
  const inst = await boot([sel(bad, 0), sel(good, 0)]);
  expect(inst).toMatchObject({ vmState: 'error', host: 'bad-1' });
  expect(await placement.consumerAllocations(inst.uuid)).toBeUndefined();
  expect((await listInstanceFaults(cellDb.pool, inst.uuid))[0]?.message).toContain('aborted: simulated non-reschedulable failure');
});

test('a full alternate is dropped and the next one is used', async () => {
  bad.running.control.update({ rescheduleRate: 1, abortRate: 0 });
  const h = good.hosts[0];
  if (h === undefined) throw new Error('no host');
  const huge = {
    ...sel(good, 0),
    allocationRequest: { json: JSON.stringify({ allocations: { [h.computeNodeUuid]: { resources: { VCPU: 1000 } } } }), version: '1.36' },
  };
  const inst = await boot([sel(bad, 0), huge, sel(good, 1)]);
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-2' });
  expect(await allocatedProviders(inst.uuid)).toEqual([good.hosts[1]?.computeNodeUuid]);
});

test('a compute SIGKILLed mid-build: the redelivered build runs on exactly one host', async () => {
  const env = {
    CELLSCHED_CELL_TRANSPORT_URL: vhost.url,
    CELLSCHED_PLACEMENT_URL: placementProc.restUrl,
    CELLSCHED_CELL_NAME: 'c1',
    CELLSCHED_COMPUTE_HOSTS: '1',
    CELLSCHED_COMPUTE_HOST_PREFIX: 'kill-',
    CELLSCHED_BUILD_LATENCY_MS: '4000',
    CELLSCHED_COMPUTE_VCPUS: '4',
    CELLSCHED_COMPUTE_MEMORY_MB: '4096',
  };
  const first = await startComputeChild(env);
  const kill1 = (await listComputeNodes(cellDb.pool, { host: 'kill-1' }))[0];
  if (kill1 === undefined) throw new Error('kill-1 not registered');
  const pending = boot([selectionFor('kill-1', kill1.uuid, CELL), sel(good, 0)]);
  await new Promise((r) => setTimeout(r, 1500));
  await stopChild(first.child, 'SIGKILL');
  const second = await startComputeChild(env);
  try {
    const inst = await pending;
    expect(inst).toMatchObject({ vmState: 'active', host: 'kill-1', buildAttempt: 1 });
    const guests = (await (await fetch(`http://127.0.0.1:${second.controlPort}/guests`)).json()) as Record<string, string[]>;
    expect(guests['kill-1']).toEqual([inst.uuid]);
    const elsewhere = [good.running.guests.snapshot(), bad.running.guests.snapshot()].flatMap((s) => Object.values(s).flat());
    expect(elsewhere).not.toContain(inst.uuid);
    expect(await allocatedProviders(inst.uuid)).toEqual([kill1.uuid]);
  } finally {
    await stopChild(second.child, 'SIGTERM');
  }
}, 60_000);

test('watchdog: a build lost with its dead host goes to the alternate exactly once; the late guest is terminated', async () => {
  const env = {
    CELLSCHED_CELL_TRANSPORT_URL: vhost.url,
    CELLSCHED_PLACEMENT_URL: placementProc.restUrl,
    CELLSCHED_CELL_NAME: 'c1',
    CELLSCHED_COMPUTE_HOSTS: '1',
    CELLSCHED_COMPUTE_HOST_PREFIX: 'dead-',
    CELLSCHED_BUILD_LATENCY_MS: '30000',
    CELLSCHED_COMPUTE_VCPUS: '4',
    CELLSCHED_COMPUTE_MEMORY_MB: '4096',
  };
  const first = await startComputeChild(env);
  const dead = (await listComputeNodes(cellDb.pool, { host: 'dead-1' }))[0];
  if (dead === undefined) throw new Error('dead-1 not registered');
  const pending = boot([selectionFor('dead-1', dead.uuid, CELL), sel(good, 1)]);
  await new Promise((r) => setTimeout(r, 1500));
  await stopChild(first.child, 'SIGKILL');
  expect(await conductor.runWatchdog()).toBe(0); // deadline not passed yet: nothing to do
  // Time passes: the deadline is over and the host's heartbeat is stale.
  await cellDb.pool.query(
    "UPDATE instances SET build_deadline_at = now() - interval '1 second' WHERE host = 'dead-1' AND vm_state = 'building'",
  );
  await cellDb.pool.query("UPDATE services SET last_seen_up = now() - interval '10 minutes' WHERE host = 'dead-1'");
  expect(await conductor.runWatchdog()).toBe(1);
  const inst = await pending;
  expect(inst).toMatchObject({ vmState: 'active', host: 'good-2', buildAttempt: 2 });
  expect(await allocatedProviders(inst.uuid)).toEqual([good.hosts[1]?.computeNodeUuid]);
  expect(await conductor.runWatchdog()).toBe(0);
  // The dead host comes back: its queued build runs, is refused, and its guest is terminated.
  const second = await startComputeChild({ ...env, CELLSCHED_BUILD_LATENCY_MS: '200' });
  try {
    const guestsOf = async (): Promise<Record<string, string[]>> =>
      (await fetch(`http://127.0.0.1:${second.controlPort}/guests`)).json() as Promise<Record<string, string[]>>;
    const stats = await waitFor('the stale guest on dead-1 terminated', async () => {
      const s = (await (await fetch(`http://127.0.0.1:${second.controlPort}/stats`)).json()) as { spawned: number; terminated: number };
      return s.terminated > 0 ? s : undefined;
    });
    expect(stats).toEqual({ spawned: 1, terminated: 1 });
    expect(await guestsOf()).toEqual({});
    expect(await getInstance(cellDb.pool, inst.uuid)).toMatchObject({ vmState: 'active', host: 'good-2' });
    expect(await allocatedProviders(inst.uuid)).toEqual([good.hosts[1]?.computeNodeUuid]);
  } finally {
    await stopChild(second.child, 'SIGTERM');
  }
}, 60_000);

test('watchdog: a build with no result a build timeout past its deadline, on a live host, goes to the alternate once; the late success is refused', async () => {
  bad.running.control.update({ rescheduleRate: 0, abortRate: 0, hang: true });
  try {
    const uuid = await startBoot([sel(bad, 1), sel(good, 0)]);
    await waitFor('the build hanging on bad-2', async () => ((await getInstance(cellDb.pool, uuid))?.host === 'bad-2' ? true : undefined));
    // past the deadline, but the host heartbeats: not lost yet (a slow build keeps its host)
    await cellDb.pool.query("UPDATE instances SET build_deadline_at = now() - interval '1 second' WHERE uuid = $1", [uuid]);
    expect(await conductor.runWatchdog()).toBe(0);
    // a whole build timeout (60 s here) later still nothing: the result (or the cast) was lost
    await cellDb.pool.query("UPDATE instances SET build_deadline_at = now() - interval '61 seconds' WHERE uuid = $1", [uuid]);
    expect(await conductor.runWatchdog()).toBe(1);
    const inst = await waitFor('moved to good-1 and ACTIVE', async () => {
      const i = await getInstance(cellDb.pool, uuid);
      return i?.vmState === 'active' ? i : undefined;
    });
    expect(inst).toMatchObject({ host: 'good-1', buildAttempt: 2 });
    expect(await conductor.runWatchdog()).toBe(0);
    // the hung build finishes after all: its success is refused (attempt 1 on bad-2 is stale), its guest terminated
    const terminated = bad.running.guests.stats.terminated;
    bad.running.control.update({ hang: false });
    await waitFor('the stale guest on bad-2 terminated', async () => (bad.running.guests.stats.terminated > terminated ? true : undefined));
    expect(bad.running.guests.has('bad-2', uuid, 1)).toBe(false);
    expect(await getInstance(cellDb.pool, uuid)).toMatchObject({ vmState: 'active', host: 'good-1' });
    expect(await allocatedProviders(uuid)).toEqual([good.hosts[0]?.computeNodeUuid]);
  } finally {
    bad.running.control.update({ hang: false });
  }
}, 60_000);

test('allocation audit: heals a leaked claim (unknown consumer, ERROR instance) after the grace period, leaves ACTIVE ones alone', async () => {
  const g1 = good.hosts[0]?.computeNodeUuid ?? '';
  const active = await boot([sel(good, 0)]);
  bad.running.control.update({ rescheduleRate: 0, abortRate: 1 });
  const errored = await boot([sel(bad, 0)]);
  const orphan = randomUUID();
  const leak = (uuid: string) =>
    placement.claim(
      {
        consumerUuid: uuid,
        projectId: 'p1',
        userId: 'u1',
        consumerType: 'INSTANCE',
        allocations: [{ resourceProviderUuid: g1, resources: { VCPU: 1 } }],
      },
      { replace: true },
    );
  expect((await leak(orphan)).kind).toBe('claimed');
  expect((await leak(errored.uuid)).kind).toBe('claimed');
  const t0 = Date.now();
  const first = await conductor.runAudit(t0);
  expect(first.healed).toEqual([]);
  expect(first.suspects).toBe(2);
  const second = await conductor.runAudit(t0 + 1500);
  expect(second.healed.map((h) => [h.consumerUuid, h.providerUuid, h.reason]).sort()).toEqual(
    [
      [errored.uuid, g1, 'leak'],
      [orphan, g1, 'unknown'],
    ].sort(),
  );
  expect(await placement.consumerAllocations(orphan)).toBeUndefined();
  expect(await placement.consumerAllocations(errored.uuid)).toBeUndefined();
  expect(await allocatedProviders(active.uuid)).toEqual([g1]);
  expect(second.missing).toEqual([]);
  expect((await conductor.runAudit(t0 + 3000)).suspects).toBe(0);
});

test('allocation audit: a build that starts while the pass reads is not reported missing; one whose allocation is gone is', async () => {
  // the super-conductor's step (claim, then the instance) runs right after the pass read the allocations
  let during: string | undefined;
  const racing = Object.create(placement) as PlacementClient;
  racing.providerConsumers = async (uuids) => {
    const read = await placement.providerConsumers(uuids);
    if (during === undefined) {
      during = randomUUID();
      await superConductorStep(cellDb, placement, during, [sel(good, 1)]);
    }
    return read;
  };
  const audit = new AllocationAudit(cellDb.pool, racing, 60_000);
  const pass = await audit.run();
  expect(during).toBeDefined();
  expect(pass.missing).not.toContain(during);
  // the same instance with its allocation gone is missing at the next pass
  await placement.release([during ?? '']);
  expect((await audit.run()).missing).toContain(during);
  await destroyInstance(cellDb.pool, during ?? '');
});

test("allocation audit: a placement that knows none of the cell's nodes (another system's) or none at all is a failed pass, not an empty one", async () => {
  const other = await startPlacement();
  try {
    const otherClient = new PlacementClient({ addresses: [other.grpcAddress] });
    try {
      const wrong = new AllocationAudit(cellDb.pool, otherClient, 1000, other.restUrl);
      await expect(wrong.run()).rejects.toMatchObject({
        code: 'cell_conductor.audit.providers_unknown',
        message: expect.stringContaining(other.restUrl) as string,
      });
      // nodes younger than the grace period may be registering (row written, provider not yet): counted unknown, not a failed pass
      const early = await new AllocationAudit(cellDb.pool, otherClient, 24 * 3600_000, other.restUrl).run();
      expect(early.unknownProviders).toBeGreaterThan(0);
      expect(early.healed).toEqual([]);
    } finally {
      otherClient.close();
    }
  } finally {
    await other.stop();
  }
  const unreachable = new PlacementClient({ addresses: ['127.0.0.1:1'], deadlineMs: 2000, maxAttempts: 1 });
  try {
    const nowhere = new AllocationAudit(cellDb.pool, unreachable, 1000);
    await expect(nowhere.run()).rejects.toMatchObject({ retryable: true });
  } finally {
    unreachable.close();
  }
  expect((await conductor.runAudit()).unknownProviders).toBe(0);
});

test('report client: a stale generation is refreshed and retried; COMPUTE_STATUS_DISABLED toggles; CUSTOM_ traits are created', async () => {
  const rp = randomUUID();
  const a = new ReportClient({ baseUrl: placementProc.restUrl });
  const b = new ReportClient({ baseUrl: placementProc.restUrl });
  await a.ensureResourceProvider(rp, `rc-${rp}`);
  expect(await b.ensureResourceProvider(rp, `rc-${rp}`)).toBe(0);
  await b.setTraits(rp, ['COMPUTE_NODE']); // a's cached generation is now stale
  await a.setTraits(rp, ['COMPUTE_NODE', 'CUSTOM_FAST']);
  await a.setComputeStatusDisabled(rp, true);
  expect((await b.getTraits(rp)).sort()).toEqual(['COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED', 'CUSTOM_FAST']);
  await b.setComputeStatusDisabled(rp, false);
  expect((await a.getTraits(rp)).sort()).toEqual(['COMPUTE_NODE', 'CUSTOM_FAST']);
  await expect(a.ensureResourceProvider(randomUUID(), `rc-${rp}`)).rejects.toMatchObject({ status: 409, code: 'placement.duplicate_name' });
});

test('report client: provider aggregates added and removed one at a time, concurrent writers both kept (generation conflicts retried), idempotent', async () => {
  const rp = randomUUID();
  const [agg1, agg2, agg3] = [randomUUID(), randomUUID(), randomUUID()];
  const a = new ReportClient({ baseUrl: placementProc.restUrl });
  const b = new ReportClient({ baseUrl: placementProc.restUrl });
  await a.ensureResourceProvider(rp, `agg-${rp}`);
  await b.ensureResourceProvider(rp, `agg-${rp}`);
  await Promise.all([a.addProviderAggregate(rp, agg1), b.addProviderAggregate(rp, agg2), a.addProviderAggregate(rp, agg3)]);
  expect((await b.getProviderAggregates(rp)).sort()).toEqual([agg1, agg2, agg3].sort());
  await a.addProviderAggregate(rp, agg1);
  await b.removeProviderAggregate(rp, agg2);
  await b.removeProviderAggregate(rp, agg2);
  expect((await a.getProviderAggregates(rp)).sort()).toEqual([agg1, agg3].sort());
  await expect(a.addProviderAggregate(randomUUID(), agg1)).rejects.toMatchObject({ status: 404 });
});

test('delete during build: the late success finds no instance, the guest is terminated, nothing is left', async () => {
  bad.running.control.update({ rescheduleRate: 0, abortRate: 0, hang: true });
  const before = { ...bad.running.guests.stats };
  const uuid = await startBoot([sel(bad, 1), sel(good, 0)]);
  await new Promise((r) => setTimeout(r, 300)); // the build is now hanging on bad-2
  // What the API's delete does for a building instance: drop the row, release the claim.
  expect(await destroyInstance(cellDb.pool, uuid)).toBe(true);
  await placement.release([uuid]);
  bad.running.control.update({ hang: false });
  await waitFor('the stale guest terminated', async () => (bad.running.guests.stats.terminated > before.terminated ? true : undefined));
  expect(bad.running.guests.stats.spawned).toBe(before.spawned + 1);
  expect(Object.values(bad.running.guests.snapshot()).flat()).not.toContain(uuid);
  expect(await getInstance(cellDb.pool, uuid, { includeDeleted: true })).toBeUndefined();
  expect(await placement.consumerAllocations(uuid)).toBeUndefined();
});

test('crash fault: a compute told to crash mid-build dies by itself; restarted, the build completes once', async () => {
  const env = {
    CELLSCHED_CELL_TRANSPORT_URL: vhost.url,
    CELLSCHED_PLACEMENT_URL: placementProc.restUrl,
    CELLSCHED_CELL_NAME: 'c1',
    CELLSCHED_COMPUTE_HOSTS: '1',
    CELLSCHED_COMPUTE_HOST_PREFIX: 'crash-',
    CELLSCHED_BUILD_LATENCY_MS: '400',
    CELLSCHED_COMPUTE_VCPUS: '4',
    CELLSCHED_COMPUTE_MEMORY_MB: '4096',
  };
  const first = await startComputeChild(env);
  const res = await fetch(`http://127.0.0.1:${first.controlPort}/faults`, { method: 'PUT', body: '{"crashRate":1}' });
  expect(res.status).toBe(200);
  const node = (await listComputeNodes(cellDb.pool, { host: 'crash-1' }))[0];
  if (node === undefined) throw new Error('crash-1 not registered');
  const exited = new Promise<NodeJS.Signals | null>((r) => first.child.once('exit', (_code, signal) => r(signal)));
  const pending = boot([selectionFor('crash-1', node.uuid, CELL)]);
  expect(await exited).toBe('SIGKILL');
  const second = await startComputeChild(env);
  try {
    expect(await pending).toMatchObject({ vmState: 'active', host: 'crash-1', buildAttempt: 1 });
    expect(await (await fetch(`http://127.0.0.1:${second.controlPort}/stats`)).json()).toEqual({ spawned: 1, terminated: 0 });
  } finally {
    await stopChild(second.child, 'SIGTERM');
  }
}, 60_000);
