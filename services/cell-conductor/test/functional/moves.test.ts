/**
 * The cell level of the server actions (issue 13) against real PostgreSQL, RabbitMQ and placement:
 * the cell conductor in-process, a simulated compute in-process (3 hosts). Each test plays the
 * super-conductor (task_state applied, migration created, the first destination claimed with
 * ClaimMove, instance_action cast) and checks the cell DB, placement and the computes' guests.
 * Beyond the happy paths: a confirm whose source never answers, a live migration's block_migration
 * on the guest it placed.
 */
import { randomUUID } from 'node:crypto';
import {
  createMigration,
  getInstance,
  getMigration,
  listInstanceActions,
  listInstanceFaults,
  softDeleteInstance,
  startInstanceAction,
  updateInstance,
  type InstanceRecord,
} from '@cellsched/cell-db';
import { instanceConsumer, parseAllocationRequest } from '@cellsched/placement-client';
import {
  CellConductorServiceService,
  ComputeServiceService,
  type Flavor,
  type InstanceActionRequest,
  type Selection,
} from '@cellsched/wire';
import { CellFixture } from './cell-fixture';
import type { TestCompute } from './compute-support';
import { FLAVOR, superConductorStep, waitFor } from './harness';

const BIG: Flavor = { id: 0, flavorid: '2', name: 'm1.big', vcpus: 2, memoryMb: 1024, rootGb: 2, ephemeralGb: 0, swap: 0, extraSpecs: {} };

let cell: CellFixture;
let cmp: TestCompute;

beforeAll(async () => {
  cell = await CellFixture.start({ vhostPrefix: 'cstest-moves', build: true });
  cmp = await cell.addCompute('mv-', 3);
}, 120_000);

afterAll(async () => {
  await cell?.stop();
});

afterEach(() => {
  cmp.running.control.update({ steps: {} });
});

/** Host `i` (1-based) of the compute, with an allocation request for `f`. */
function dest(i: number, f: Flavor = FLAVOR): Selection {
  const h = cmp.hosts[i - 1];
  if (h === undefined) throw new Error('no such host');
  const json = JSON.stringify({
    allocations: { [h.computeNodeUuid]: { resources: { VCPU: f.vcpus, MEMORY_MB: f.memoryMb, DISK_GB: f.rootGb } } },
  });
  return {
    computeNodeUuid: h.computeNodeUuid,
    serviceHost: h.host,
    nodename: h.host,
    cellUuid: cell.cellUuid,
    availabilityZone: 'nova',
    allocationRequest: { json, version: '1.36' },
  };
}

const nodeOf = (host: string): string => cmp.hosts.find((h) => h.host === host)?.computeNodeUuid ?? '?';
const hostOfNode = (uuid: string): string => cmp.hosts.find((h) => h.computeNodeUuid === uuid)?.host ?? uuid;

/** Where a consumer holds what, as `host:VCPU`. */
async function held(consumer: string): Promise<string[]> {
  return ((await cell.placement.consumerAllocations(consumer))?.allocations ?? [])
    .map((a) => `${hostOfNode(a.resourceProviderUuid)}:${a.resources.VCPU ?? 0}`)
    .sort();
}

const guestsOf = (uuid: string): string[] =>
  Object.entries(cmp.running.guests.snapshot())
    .filter(([, us]) => us.includes(uuid))
    .map(([h]) => h)
    .sort();

/** An ACTIVE instance on host `i`, as a boot leaves it. */
async function activeOn(i: number): Promise<InstanceRecord> {
  const uuid = randomUUID();
  const inst = await superConductorStep(cell.cellDb, cell.placement, uuid, [dest(i)]);
  await cell.bus.castClient(ComputeServiceService).cast(
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
      hostList: [dest(i)],
      attempt: 1,
      requestId: `req-create-${uuid}`,
    },
    { server: inst.host ?? '' },
  );
  return settled(uuid, (r) => r.vmState === 'active');
}

async function settled(
  uuid: string,
  done: (r: InstanceRecord) => boolean = (r) => r.taskState === null,
  timeoutMs = 30_000,
): Promise<InstanceRecord> {
  return waitFor(
    `instance ${uuid} settled`,
    async () => {
      const r = await getInstance(cell.cellDb.pool, uuid);
      return r !== undefined && r.taskState === null && done(r) ? r : undefined;
    },
    timeoutMs,
  );
}

/**
 * Plays the super-conductor's `server_action`: the task_state and the instance action, for a move
 * the migration record and ClaimMove of the first destination; then casts instance_action.
 */
async function act(
  inst: InstanceRecord,
  action: string,
  taskState: string | null,
  o: Partial<InstanceActionRequest> & { migrationType?: 'migration' | 'resize' | 'live-migration' | 'evacuation' } = {},
): Promise<string> {
  const requestId = `req-${randomUUID()}`;
  if (taskState !== null) await updateInstance(cell.cellDb.pool, inst.uuid, { taskState });
  await startInstanceAction(cell.cellDb.pool, { instanceUuid: inst.uuid, requestId, action, userId: 'u1', projectId: 'p1' });
  let migrationUuid = o.migrationUuid ?? '';
  const first = o.hostList?.[0];
  if (o.migrationType !== undefined && first !== undefined) {
    const { migration } = await createMigration(cell.cellDb.pool, {
      instanceUuid: inst.uuid,
      migrationType: o.migrationType,
      status: o.migrationType === 'live-migration' || o.migrationType === 'evacuation' ? 'accepted' : 'pre-migrating',
      sourceCompute: inst.host,
      sourceNode: inst.node,
      destCompute: first.serviceHost,
      destNode: first.nodename,
      userId: 'u1',
      projectId: 'p1',
    });
    migrationUuid = migration.uuid;
    const claimed = await cell.placement.claimMove(
      instanceConsumer({ uuid: inst.uuid, projectId: 'p1', userId: 'u1' }, parseAllocationRequest(first.allocationRequest?.json ?? '')),
      migrationUuid,
    );
    expect(claimed.kind).toBe('claimed');
  } else if (action === 'unshelve' && first !== undefined) {
    await cell.placement.claim(
      instanceConsumer({ uuid: inst.uuid, projectId: 'p1', userId: 'u1' }, parseAllocationRequest(first.allocationRequest?.json ?? '')),
      { replace: true },
    );
  }
  const { migrationType: _t, ...rest } = o;
  await cell.bus.castClient(CellConductorServiceService).cast('instanceAction', {
    instanceUuid: inst.uuid,
    action,
    requestId,
    rebootType: '',
    imageRef: '',
    migrationUuid,
    hostList: [],
    newFlavor: undefined,
    requestSpec: undefined,
    userId: 'u1',
    projectId: 'p1',
    displayName: '',
    blockMigration: '',
    ...rest,
  });
  return requestId;
}

async function events(uuid: string, requestId: string): Promise<string[]> {
  const a = (await listInstanceActions(cell.cellDb.pool, uuid)).find((x) => x.requestId === requestId);
  return (a?.events ?? []).map((e) => `${e.event} ${e.host ?? '-'} ${e.result ?? '-'}`);
}

test('stop, start, hard reboot: on the same host, holding the same allocation, one event each', async () => {
  const inst = await activeOn(1);
  const stop = await act(inst, 'stop', 'powering-off');
  expect(await settled(inst.uuid, (r) => r.vmState === 'stopped')).toMatchObject({ powerState: 4, host: 'mv-1' });
  expect(cmp.running.guests.get('mv-1', inst.uuid)?.power).toBe('shutdown');
  await act(inst, 'start', 'powering-on');
  await settled(inst.uuid, (r) => r.vmState === 'active');
  const reboot = await act(inst, 'reboot', 'rebooting_hard', { rebootType: 'HARD' });
  await settled(inst.uuid, () => true);
  expect(
    await waitFor('reboot finished', async () => ((await events(inst.uuid, reboot)).length > 0 ? events(inst.uuid, reboot) : undefined)),
  ).toEqual(['compute_reboot_instance mv-1 Success']);
  expect(await events(inst.uuid, stop)).toEqual(['compute_stop_instance mv-1 Success']);
  expect(await held(inst.uuid)).toEqual(['mv-1:1']);
  expect(guestsOf(inst.uuid)).toEqual(['mv-1']);
  const actions = (await listInstanceActions(cell.cellDb.pool, inst.uuid)).filter((a) => a.action !== 'create');
  expect(actions.map((a) => [a.action, a.finishTime !== null, a.message])).toEqual([
    ['reboot', true, null],
    ['start', true, null],
    ['stop', true, null],
  ]);
});

test('resize: prep_resize fails on the first destination, the alternate is claimed in the cell; VERIFY_RESIZE holds both; confirm drops the source', async () => {
  cmp.running.control.update({ steps: { prep_resize: { failRate: 1, hosts: ['mv-2'] } } });
  const inst = await activeOn(1);
  const resize = await act(inst, 'resize', 'resize_prep', {
    migrationType: 'resize',
    hostList: [dest(2, BIG), dest(3, BIG)],
    newFlavor: BIG,
  });
  const r = await settled(inst.uuid, (x) => x.vmState === 'resized');
  expect(r).toMatchObject({ host: 'mv-3', flavor: { name: 'm1.big' }, oldFlavor: { name: 'm1.tiny' } });
  const migrationUuid = await getMigrationOf(inst.uuid);
  expect(await getMigration(cell.cellDb.pool, migrationUuid)).toMatchObject({
    status: 'finished',
    destCompute: 'mv-3',
    sourceCompute: 'mv-1',
  });
  expect(await held(inst.uuid)).toEqual(['mv-3:2']);
  expect(await held(migrationUuid)).toEqual(['mv-1:1']);
  expect(await events(inst.uuid, resize)).toEqual([
    'compute_prep_resize mv-2 Error',
    'compute_prep_resize mv-3 Success',
    'compute_resize_instance mv-1 Success',
    'compute_finish_resize mv-3 Success',
  ]);
  expect(guestsOf(inst.uuid)).toEqual(['mv-1', 'mv-3']);
  // the audit sees a move, not a leak: the instance on its destination, the migration on the source
  expect(await cell.conductor.runAudit()).toMatchObject({ suspects: 0, healed: [], missing: [] });

  const confirm = await act(r, 'confirmResize', null, { migrationUuid });
  await settled(inst.uuid, (x) => x.vmState === 'active');
  expect(await getMigration(cell.cellDb.pool, migrationUuid)).toMatchObject({ status: 'confirmed' });
  expect(await held(inst.uuid)).toEqual(['mv-3:2']);
  expect(await held(migrationUuid)).toEqual([]);
  expect(guestsOf(inst.uuid)).toEqual(['mv-3']);
  expect(await events(inst.uuid, confirm)).toEqual(['compute_confirm_resize mv-1 Success']);
  expect((await getInstance(cell.cellDb.pool, inst.uuid))?.oldFlavor).toBeUndefined();
});

async function getMigrationOf(instanceUuid: string): Promise<string> {
  const r = await cell.cellDb.pool.query<{ uuid: string }>(
    'SELECT uuid FROM migrations WHERE instance_uuid = $1 ORDER BY id DESC LIMIT 1',
    [instanceUuid],
  );
  return r.rows[0]?.uuid ?? '';
}

test('cold migrate then revert: back on the source with its flavor, the migration reverted, nothing held by it', async () => {
  const inst = await activeOn(1);
  await act(inst, 'migrate', 'resize_prep', { migrationType: 'migration', hostList: [dest(2)], newFlavor: FLAVOR });
  const r = await settled(inst.uuid, (x) => x.vmState === 'resized');
  const migrationUuid = await getMigrationOf(inst.uuid);
  await act(r, 'revertResize', 'resize_reverting', { migrationUuid });
  expect(await settled(inst.uuid, (x) => x.vmState === 'active')).toMatchObject({ host: 'mv-1', flavor: { name: 'm1.tiny' } });
  expect(await getMigration(cell.cellDb.pool, migrationUuid)).toMatchObject({ status: 'reverted' });
  expect(await held(inst.uuid)).toEqual(['mv-1:1']);
  expect(await held(migrationUuid)).toEqual([]);
  expect(guestsOf(inst.uuid)).toEqual(['mv-1']);
  expect(cmp.running.guests.get('mv-1', inst.uuid)?.power).toBe('running');
});

test('confirm while the source never answers (its confirm hung, its service forced down): confirmed without it by the step watchdog; the terminate queued on the source destroys its copy', async () => {
  const inst = await activeOn(1);
  await act(inst, 'migrate', 'resize_prep', { migrationType: 'migration', hostList: [dest(2)], newFlavor: FLAVOR });
  const r = await settled(inst.uuid, (x) => x.vmState === 'resized');
  const migrationUuid = await getMigrationOf(inst.uuid);
  expect(guestsOf(inst.uuid)).toEqual(['mv-1', 'mv-2']);
  cmp.running.control.update({ steps: { confirm_resize: { hang: true, hosts: ['mv-1'] } } });
  const confirm = await act(r, 'confirmResize', null, { migrationUuid });
  await waitFor('confirm cast', async () =>
    (await cell.cellDb.pool.query('SELECT 1 FROM instance_tasks WHERE instance_uuid = $1', [inst.uuid])).rowCount === 1 ? true : undefined,
  );
  await cell.cellDb.pool.query("UPDATE services SET forced_down = true WHERE host = 'mv-1'");
  try {
    expect((await cell.conductor.runActionPasses()).stepsFailed).toBe(1);
    expect(await settled(inst.uuid, (x) => x.vmState === 'active')).toMatchObject({
      host: 'mv-2',
      oldFlavor: undefined,
      newFlavor: undefined,
    });
    expect(await getMigration(cell.cellDb.pool, migrationUuid)).toMatchObject({ status: 'confirmed' });
    expect(await held(inst.uuid)).toEqual(['mv-2:1']);
    expect(await held(migrationUuid)).toEqual([]);
    expect(await events(inst.uuid, confirm)).toEqual(['compute_confirm_resize mv-1 Error']);
    expect(await listInstanceFaults(cell.cellDb.pool, inst.uuid)).toEqual([]);
    // the compute is alive (only its confirm hangs): it takes the terminate and the copy goes
    await waitFor('the source copy gone', async () => (guestsOf(inst.uuid).join() === 'mv-2' ? true : undefined));
  } finally {
    await cell.cellDb.pool.query("UPDATE services SET forced_down = false WHERE host = 'mv-1'");
  }
});

test('live migration: the instance and its allocation on the destination, the migration completed and released, the block_migration asked for on the guest', async () => {
  const inst = await activeOn(1);
  const live = await act(inst, 'live-migration', 'migrating', {
    migrationType: 'live-migration',
    hostList: [dest(2)],
    blockMigration: 'true',
  });
  expect(await settled(inst.uuid, (x) => x.host === 'mv-2')).toMatchObject({ vmState: 'active', node: 'mv-2' });
  expect(await getMigration(cell.cellDb.pool, await getMigrationOf(inst.uuid))).toMatchObject({ status: 'completed' });
  expect(await held(inst.uuid)).toEqual(['mv-2:1']);
  expect(await held(await getMigrationOf(inst.uuid))).toEqual([]);
  expect(guestsOf(inst.uuid)).toEqual(['mv-2']);
  expect(cmp.running.guests.get('mv-2', inst.uuid)).toMatchObject({ power: 'running', blockMigration: 'true' });
  expect(await events(inst.uuid, live)).toEqual([
    'compute_pre_live_migration mv-2 Success',
    'compute_live_migration mv-1 Success',
    'compute_post_live_migration_at_destination mv-2 Success',
  ]);
});

test('a live migration failing while running is rolled back: ACTIVE on the source, the source allocation back, migration error', async () => {
  cmp.running.control.update({ steps: { live_migration: { failRate: 1 } } });
  const inst = await activeOn(1);
  await act(inst, 'live-migration', 'migrating', { migrationType: 'live-migration', hostList: [dest(3)] });
  expect(await settled(inst.uuid, () => true)).toMatchObject({ vmState: 'active', host: 'mv-1' });
  expect(await getMigration(cell.cellDb.pool, await getMigrationOf(inst.uuid))).toMatchObject({ status: 'error' });
  expect(await held(inst.uuid)).toEqual(['mv-1:1']);
  expect(await held(await getMigrationOf(inst.uuid))).toEqual([]);
  expect(guestsOf(inst.uuid)).toEqual(['mv-1']);
  expect((await listInstanceFaults(cell.cellDb.pool, inst.uuid))[0]?.message).toMatch(/^live_migration of instance .* failed on host mv-1/);
});

test('shelve offloads: nothing held, no host; unshelve on the alternate when the first host fails', async () => {
  const inst = await activeOn(2);
  await act(inst, 'shelve', 'shelving');
  expect(await settled(inst.uuid, (x) => x.vmState === 'shelved_offloaded')).toMatchObject({ host: null, node: null });
  expect(await held(inst.uuid)).toEqual([]);
  expect(guestsOf(inst.uuid)).toEqual([]);
  cmp.running.control.update({ steps: { unshelve: { failRate: 1, hosts: ['mv-1'] } } });
  const shelved = (await getInstance(cell.cellDb.pool, inst.uuid)) as InstanceRecord;
  await act(shelved, 'unshelve', 'unshelving', { hostList: [dest(1), dest(3)] });
  expect(await settled(inst.uuid, (x) => x.vmState === 'active')).toMatchObject({ host: 'mv-3' });
  expect(await held(inst.uuid)).toEqual(['mv-3:1']);
  expect(guestsOf(inst.uuid)).toEqual(['mv-3']);
});

test('evacuate from a forced-down host: rebuilt on the destination (done); the source, heard from again, destroys its copy and the migration is released', async () => {
  const inst = await activeOn(1);
  await cell.cellDb.pool.query("UPDATE services SET forced_down = true WHERE host = 'mv-1'");
  try {
    await act(inst, 'evacuate', 'rebuilding', { migrationType: 'evacuation', hostList: [dest(2)] });
    expect(await settled(inst.uuid, (x) => x.host === 'mv-2')).toMatchObject({ vmState: 'active' });
    const migrationUuid = await getMigrationOf(inst.uuid);
    // the source still heartbeats (forced down, not dead): its copy goes at its next heartbeat
    await waitFor('evacuation completed', async () =>
      (await getMigration(cell.cellDb.pool, migrationUuid))?.status === 'completed' ? true : undefined,
    );
    expect(await held(inst.uuid)).toEqual(['mv-2:1']);
    expect(await held(migrationUuid)).toEqual([]);
    expect(guestsOf(inst.uuid)).toEqual(['mv-2']);
  } finally {
    await cell.cellDb.pool.query("UPDATE services SET forced_down = false WHERE host = 'mv-1'");
  }
});

test('a step on a forced-down host fails at once (step watchdog): the stop ends with a fault, nothing stuck', async () => {
  cmp.running.control.update({ steps: { power_off: { hang: true, hosts: ['mv-3'] } } });
  const inst = await activeOn(3);
  await act(inst, 'stop', 'powering-off');
  await waitFor('step cast', async () =>
    (await cell.cellDb.pool.query('SELECT 1 FROM instance_tasks WHERE instance_uuid = $1', [inst.uuid])).rowCount === 1 ? true : undefined,
  );
  await cell.cellDb.pool.query("UPDATE services SET forced_down = true WHERE host = 'mv-3'");
  try {
    expect((await cell.conductor.runActionPasses()).stepsFailed).toBe(1);
    expect(await settled(inst.uuid, () => true)).toMatchObject({ vmState: 'active', taskState: null });
    expect((await listInstanceFaults(cell.cellDb.pool, inst.uuid))[0]?.message).toBe(
      'host mv-3 is gone (its compute service was deleted or forced down)',
    );
  } finally {
    await cell.cellDb.pool.query("UPDATE services SET forced_down = false WHERE host = 'mv-3'");
  }
});

test('delete during a resize (finish_resize hung on the destination): no allocation of the instance or the migration, no guest on either host', async () => {
  cmp.running.control.update({ steps: { finish_resize: { hang: true } } });
  const inst = await activeOn(1);
  await act(inst, 'resize', 'resize_prep', { migrationType: 'resize', hostList: [dest(2, BIG)], newFlavor: BIG });
  const migrationUuid = await getMigrationOf(inst.uuid);
  await waitFor('finish_resize in flight', async () =>
    (await getMigration(cell.cellDb.pool, migrationUuid))?.status === 'post-migrating' ? true : undefined,
  );
  // the super-conductor's delete: the row soft-deleted under its lock, the instance released, terminate on its host
  await softDeleteInstance(cell.cellDb.pool, inst.uuid);
  await cell.placement.release([inst.uuid]);
  expect((await cell.conductor.runActionPasses()).orphansCleaned).toBe(1);
  expect(await held(migrationUuid)).toEqual([]);
  expect(await getMigration(cell.cellDb.pool, migrationUuid)).toMatchObject({ status: 'error' });
  cmp.running.control.update({ steps: {} });
  // the hung finish_resize completes late: its result finds no instance, the guest it made is terminated
  await waitFor('no guest left', async () => (guestsOf(inst.uuid).length === 0 ? true : undefined));
  expect(await held(inst.uuid)).toEqual([]);
  expect(nodeOf('mv-1')).not.toBe('?');
});
