// The super-conductor's schedule_and_build_instances against real PostgreSQL (API DB, cell0,
// one cell), with a counting scheduler and a recording compute bus: redelivery, a crash
// between steps, NoValidHost burial, delete during scheduling; delete_instance and update_service.
import { randomUUID } from 'node:crypto';
import {
  API_DB_MIGRATIONS_DIR,
  createBuildRequest,
  createCellMapping,
  createInstanceMapping,
  deleteBuildRequest,
  deleteInstanceMapping,
  deleteRequestSpec,
  getBuildRequest,
  getInstanceMapping,
  getRequestSpec,
  saveRequestSpec,
  setInstanceMappingQueuedForDelete,
} from '@cellsched/api-db';
import { BUS_ERROR, BusError, type CastContext } from '@cellsched/bus';
import {
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  createMigration,
  getInstance,
  getMigration,
  getService,
  listInstanceFaults,
  updateInstance,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  Instance,
  type BuildAndRunInstanceRequest,
  type BuildInstancesRequest,
  type Failure,
  type Flavor,
  type RequestSpec,
  type Selection,
} from '@cellsched/wire';
import pino from 'pino';
import { cellInstanceWriters, cellMappingWriter } from '../../src/adapters/build-deps';
import { CellRegistry, type CellHandle } from '../../src/adapters/cells';
import { deleteInstanceHandler } from '../../src/adapters/delete-handler';
import { updateServiceHandler } from '../../src/adapters/service-handler';
import { scheduleAndBuildInstancesHandler, type ScheduleDeps } from '../../src/adapters/schedule-handler';
import type { DestinationSelector, SelectOutcome } from '../../src/ports';

const CELL1 = randomUUID();
const FLAVOR: Flavor = {
  id: 0,
  flavorid: '1',
  name: 'm1.tiny',
  vcpus: 1,
  memoryMb: 512,
  rootGb: 1,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: {},
};
/** A first delivery of a 1.5 sender's cast. */
const ctx = { logger: pino({ level: 'silent' }), redelivered: false, rpcVersion: '1.5' } as unknown as CastContext;
let apiDb: TestDatabase;
let cell0Db: TestDatabase;
let cell1Db: TestDatabase;
let cells: CellRegistry;
const casts: { host: string; req: BuildAndRunInstanceRequest }[] = [];
/** Hosts no compute serves: the broker refuses casts to them. */
const unserved = new Set<string>();
const handedOver: BuildInstancesRequest[] = [];
let noConductorQueue = false;
const refused = (what: string): BusError =>
  new BusError(BUS_ERROR.publishUnroutable, `no queue is bound to ${what}; nothing was queued`, false);
const released: string[] = [];

const sel = (host: string): Selection => ({
  computeNodeUuid: randomUUID(),
  serviceHost: host,
  nodename: host,
  cellUuid: CELL1,
  availabilityZone: 'nova',
  allocationRequest: { json: '{}', version: '1.36' },
});

class FakeScheduler implements DestinationSelector {
  calls = 0;
  next: (uuids: readonly string[]) => Promise<SelectOutcome> = async (uuids) => ({
    kind: 'selected',
    destinations: uuids.map(() => [sel('h1'), sel('h2'), sel('h3')]),
  });
  async selectDestinations(_spec: RequestSpec, uuids: readonly string[]): Promise<SelectOutcome> {
    this.calls++;
    return this.next(uuids);
  }
}

function deps(selector: DestinationSelector): ScheduleDeps {
  return {
    apiDb: apiDb.pool,
    cells,
    claims: {
      release: async (u) => {
        released.push(...u);
      },
    },
    buildTimeoutMs: 60_000,
    cellMappings: cellMappingWriter(apiDb.pool),
    cellInstances: cellInstanceWriters(),
    selector,
    numAlternates: 2,
  };
}

/** What the api does on POST /servers: RequestSpec, BuildRequest and a cell-less mapping. */
async function apiCreate(): Promise<{ uuid: string; spec: RequestSpec }> {
  const uuid = randomUUID();
  const spec = {
    instanceUuid: uuid,
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    numInstances: 1,
    availabilityZone: '',
    schedulerHints: {},
    ignoreHosts: [],
    seed: 1,
    requestId: `req-${uuid}`,
  } as unknown as RequestSpec;
  await saveRequestSpec(apiDb.pool, spec);
  await createBuildRequest(apiDb.pool, {
    uuid,
    projectId: 'p1',
    userId: 'u1',
    displayName: 'vm',
    flavor: FLAVOR,
    imageRef: 'img',
  } as never);
  await createInstanceMapping(apiDb.pool, { instanceUuid: uuid, projectId: 'p1', userId: 'u1' });
  return { uuid, spec };
}

const cast = (uuid: string, spec: RequestSpec) => ({
  requestSpec: spec,
  // as a 1.5 sender: no instance (read from the API DB)
  buildRequests: [{ instanceUuid: uuid, displayName: 'vm', launchIndex: 0, instance: undefined }],
  requestId: `req-${uuid}`,
  recast: false,
});

beforeAll(async () => {
  apiDb = await createTestDatabase({ kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, prefix: 'sc_api' });
  cell0Db = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'sc_cell0' });
  cell1Db = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'sc_cell1' });
  await createCellMapping(apiDb.pool, { uuid: CELL0_UUID, name: 'cell0', transportUrl: 'none:///', databaseConnection: cell0Db.url });
  await createCellMapping(apiDb.pool, {
    uuid: CELL1,
    name: 'cell1',
    transportUrl: 'amqp://x@127.0.0.1/c1',
    databaseConnection: cell1Db.url,
  });
  const compute = {
    cast: async (_m: string, req: BuildAndRunInstanceRequest, o: { server: string }) => {
      if (unserved.has(o.server)) throw refused(`compute.${o.server}`);
      casts.push({ host: o.server, req });
    },
  };
  const conductor = {
    cast: async (_m: string, req: BuildInstancesRequest) => {
      if (noConductorQueue) throw refused('conductor');
      handedOver.push(req);
    },
  };
  const c1: CellHandle = { uuid: CELL1, name: 'cell1', pool: cell1Db.pool, compute: compute as never, conductor: conductor as never };
  cells = CellRegistry.fixed(apiDb.pool, [
    { uuid: CELL0_UUID, name: 'cell0', pool: cell0Db.pool, compute: undefined, conductor: undefined },
    c1,
  ]);
  await cells.refresh();
}, 60_000);

afterAll(async () => {
  await Promise.all([apiDb?.drop(), cell0Db?.drop(), cell1Db?.drop()]);
});

beforeEach(() => {
  casts.length = 0;
  released.length = 0;
  handedOver.length = 0;
  unserved.clear();
  noConductorQueue = false;
});

test('one instance: created in the chosen cell, mapped, build request gone, build cast to the chosen host with the alternates', async () => {
  const { uuid, spec } = await apiCreate();
  const s = new FakeScheduler();
  await scheduleAndBuildInstancesHandler(deps(s))(cast(uuid, spec), ctx);
  expect(s.calls).toBe(1);
  const inst = await getInstance(cell1Db.pool, uuid);
  expect(inst).toMatchObject({ vmState: 'building', host: 'h1', buildAttempt: 1 });
  expect(inst?.buildHostList.map((x) => x.serviceHost)).toEqual(['h2', 'h3']);
  expect((await getInstanceMapping(apiDb.pool, uuid))?.cell?.uuid).toBe(CELL1);
  expect(await getBuildRequest(apiDb.pool, uuid)).toBeUndefined();
  expect(casts.map((c) => [c.host, c.req.hostList.map((h) => h.serviceHost), c.req.attempt])).toEqual([['h1', ['h1', 'h2', 'h3'], 1]]);
});

test("a build cast the broker refuses (no compute serves the chosen host) goes to the cell conductor as that host's failure, with the alternates", async () => {
  const { uuid, spec } = await apiCreate();
  unserved.add('h1');
  await scheduleAndBuildInstancesHandler(deps(new FakeScheduler()))(cast(uuid, spec), ctx);
  expect(casts).toEqual([]);
  expect(handedOver).toHaveLength(1);
  expect(handedOver[0]).toMatchObject({
    failedHost: 'h1',
    attempt: 1,
    requestId: `req-${uuid}`,
    instance: { uuid },
    failure: { code: 'super_conductor.build.unroutable', retryable: true },
  });
  expect(handedOver[0]?.hostList.map((h) => h.serviceHost)).toEqual(['h2', 'h3']);
  expect(handedOver[0]?.failure?.message).toContain('no compute serves host h1');
  expect(await getInstance(cell1Db.pool, uuid)).toMatchObject({ vmState: 'building', host: 'h1' });
  expect(await getBuildRequest(apiDb.pool, uuid)).toBeUndefined();
  expect(released).toEqual([]);
});

test('a refused build in a cell with no conductor queue ends in ERROR with a fault saying why, its claim released; the next instance is still placed', async () => {
  const a = await apiCreate();
  const b = await apiCreate();
  unserved.add('h1');
  noConductorQueue = true;
  const s = new FakeScheduler();
  s.next = async (uuids) => ({ kind: 'selected', destinations: uuids.map((_u, i) => (i === 0 ? [sel('h1'), sel('h2')] : [sel('h2')])) });
  const multi = {
    requestSpec: a.spec,
    buildRequests: [
      { instanceUuid: a.uuid, displayName: 'vm', launchIndex: 0, instance: undefined },
      { instanceUuid: b.uuid, displayName: 'vm', launchIndex: 1, instance: undefined },
    ],
    requestId: `req-${a.uuid}`,
    recast: false,
  };
  await scheduleAndBuildInstancesHandler(deps(s))(multi, ctx);
  expect(await getInstance(cell1Db.pool, a.uuid)).toMatchObject({ vmState: 'error' });
  expect(released).toEqual([a.uuid]);
  const [fault] = await listInstanceFaults(cell1Db.pool, a.uuid);
  expect(fault?.message).toContain('no compute serves host h1 and cell cell1 has no conductor to retry it');
  expect(await getInstance(cell1Db.pool, b.uuid)).toMatchObject({ vmState: 'building', host: 'h2' });
  expect(casts.map((c) => c.host)).toEqual(['h2']);
});

test('a redelivered cast never schedules again: the build is re-cast to the same host', async () => {
  const { uuid, spec } = await apiCreate();
  const s = new FakeScheduler();
  const handler = scheduleAndBuildInstancesHandler(deps(s));
  await handler(cast(uuid, spec), ctx);
  await handler(cast(uuid, spec), ctx);
  expect(s.calls).toBe(1);
  expect(casts.map((c) => c.host)).toEqual(['h1', 'h1']);
  expect(released).toEqual([]);
});

test.each([
  ['redelivered', { ...ctx, redelivered: true }, false],
  ["a re-cast (the api's retry, the sweeper)", ctx, true],
  ['from a 1.4 sender (no recast field)', { ...ctx, rpcVersion: '1.4' }, false],
])('a delivery that crashed after creating the instance is resumed in that cell without the scheduler: %s', async (_what, c, recast) => {
  const { uuid, spec } = await apiCreate();
  await createInstance(cell1Db.pool, {
    uuid,
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    vmState: 'building',
    host: 'h2',
    node: 'h2',
    buildHostList: [sel('h3')],
  });
  const s = new FakeScheduler();
  await scheduleAndBuildInstancesHandler(deps(s))({ ...cast(uuid, spec), recast }, c);
  expect(s.calls).toBe(0);
  expect((await getInstanceMapping(apiDb.pool, uuid))?.cell?.uuid).toBe(CELL1);
  expect(await getBuildRequest(apiDb.pool, uuid)).toBeUndefined();
  expect(casts.map((c) => [c.host, c.req.hostList.map((h) => h.serviceHost)])).toEqual([['h2', ['h2', 'h3']]]);
});

describe("a 1.6 sender: the first cast carries each BuildRequest's instance", () => {
  const ctx16 = { ...ctx, rpcVersion: '1.6' } as CastContext;
  const carried = (uuid: string, spec: RequestSpec, displayName = 'carried') => ({
    ...cast(uuid, spec),
    buildRequests: [
      {
        instanceUuid: uuid,
        displayName,
        launchIndex: 0,
        instance: Instance.fromPartial({
          uuid,
          projectId: 'p1',
          userId: 'u1',
          displayName,
          flavor: FLAVOR,
          imageRef: 'img',
          reservationId: 'r-carried',
        }),
      },
    ],
  });

  test('its first delivery places the instance as carried, without reading the BuildRequest back', async () => {
    const { uuid, spec } = await apiCreate(); // the API DB's copy is named 'vm'
    const s = new FakeScheduler();
    await scheduleAndBuildInstancesHandler(deps(s))(carried(uuid, spec), ctx16);
    expect(s.calls).toBe(1);
    expect(await getInstance(cell1Db.pool, uuid)).toMatchObject({
      displayName: 'carried',
      reservationId: 'r-carried',
      host: 'h1',
      vmState: 'building',
    });
    expect((await getInstanceMapping(apiDb.pool, uuid))?.cell?.uuid).toBe(CELL1);
    expect(await getBuildRequest(apiDb.pool, uuid)).toBeUndefined();
    expect(casts.map((c) => c.host)).toEqual(['h1']);
    expect(released).toEqual([]);
  });

  test('the server deleted before its cast arrived: scheduled, then found deleted: its claim released, no instance, mapping or cast left', async () => {
    const { uuid, spec } = await apiCreate();
    // what the api's DELETE does to a server still a BuildRequest (one transaction there)
    await deleteBuildRequest(apiDb.pool, uuid);
    await deleteRequestSpec(apiDb.pool, uuid);
    await deleteInstanceMapping(apiDb.pool, uuid);
    const s = new FakeScheduler();
    await scheduleAndBuildInstancesHandler(deps(s))(carried(uuid, spec), ctx16);
    expect(released).toEqual([uuid]);
    expect(await getInstance(cell1Db.pool, uuid, { includeDeleted: true })).toBeUndefined();
    expect(await getInstanceMapping(apiDb.pool, uuid)).toBeUndefined();
    expect(casts).toEqual([]);
  });

  test.each([
    ['redelivered', { ...ctx16, redelivered: true } as CastContext, false],
    ["a re-cast (the api's retry, the sweeper)", ctx16, true],
  ])('%s: the API DB is read as before, and an instance already placed is not scheduled again', async (_what, c, recast) => {
    const { uuid, spec } = await apiCreate();
    const s = new FakeScheduler();
    const handler = scheduleAndBuildInstancesHandler(deps(s));
    await handler(carried(uuid, spec), ctx16);
    await handler({ ...carried(uuid, spec, 'again'), recast }, c);
    expect(s.calls).toBe(1);
    expect(await getInstance(cell1Db.pool, uuid)).toMatchObject({ displayName: 'carried', host: 'h1' });
    expect(casts.map((x) => x.host)).toEqual(['h1', 'h1']);
    expect(released).toEqual([]);
  });
});

test('NoValidHost: buried in cell0 in ERROR with the diagnosis, once, whatever is redelivered', async () => {
  const { uuid, spec } = await apiCreate();
  const failure: Failure = {
    code: 'scheduler.no_valid_host',
    message: 'No valid host was found. ',
    retryable: false,
    expected: true,
    metadata: {},
    diagnosis: [{ filter: 'RamFilter', hostsBefore: 3, hostsAfter: 0, reason: 'not enough RAM' }],
  };
  const s = new FakeScheduler();
  s.next = async () => ({ kind: 'no_valid_host', failure });
  const handler = scheduleAndBuildInstancesHandler(deps(s));
  await handler(cast(uuid, spec), ctx);
  await handler(cast(uuid, spec), ctx);
  expect(s.calls).toBe(1);
  expect(await getInstance(cell0Db.pool, uuid)).toMatchObject({ vmState: 'error', host: null });
  const faults = await listInstanceFaults(cell0Db.pool, uuid);
  expect(faults).toHaveLength(1);
  expect(faults[0]?.message).toMatch(/^No valid host was found/);
  expect(faults[0]?.details).toContain('RamFilter: 3 -> 0 hosts (not enough RAM)');
  expect((await getInstanceMapping(apiDb.pool, uuid))?.cell?.uuid).toBe(CELL0_UUID);
  expect(await getBuildRequest(apiDb.pool, uuid)).toBeUndefined();
  expect(casts).toEqual([]);
});

test('deleted while being scheduled: the claim is released and no instance, mapping or cast is left', async () => {
  const { uuid, spec } = await apiCreate();
  const s = new FakeScheduler();
  const selected = s.next;
  s.next = async (uuids) => {
    await deleteBuildRequest(apiDb.pool, uuid); // the user's DELETE wins the build request
    return selected(uuids);
  };
  await scheduleAndBuildInstancesHandler(deps(s))(cast(uuid, spec), ctx);
  expect(released).toEqual([uuid]);
  expect(await getInstance(cell1Db.pool, uuid, { includeDeleted: true })).toBeUndefined();
  expect(await getInstanceMapping(apiDb.pool, uuid)).toBeUndefined();
  expect(casts).toEqual([]);
});

test('delete_instance of a server in its cell: soft-deleted, claim released, guest terminated, nothing left at the API level; a redelivery changes nothing', async () => {
  const { uuid, spec } = await apiCreate();
  await scheduleAndBuildInstancesHandler(deps(new FakeScheduler()))(cast(uuid, spec), ctx);
  casts.length = 0;
  await setInstanceMappingQueuedForDelete(apiDb.pool, uuid, true); // what the api's DELETE does before casting
  const handler = deleteInstanceHandler(deps(new FakeScheduler()));
  const req = { instanceUuid: uuid, cellUuid: CELL1, requestId: `req-del-${uuid}`, userId: 'u1', projectId: 'p1' };
  await handler(req, ctx);
  expect(await getInstance(cell1Db.pool, uuid)).toBeUndefined();
  expect(await getInstance(cell1Db.pool, uuid, { includeDeleted: true })).toMatchObject({ uuid });
  expect(released).toEqual([uuid]);
  expect(casts.map((c) => [c.host, (c.req as unknown as { instanceUuid: string }).instanceUuid])).toEqual([['h1', uuid]]);
  expect(await getInstanceMapping(apiDb.pool, uuid)).toBeUndefined();
  expect(await getRequestSpec(apiDb.pool, uuid)).toBeUndefined();
  await handler(req, ctx);
  expect(released).toEqual([uuid, uuid]); // the release is idempotent; no second terminate
  expect(casts).toHaveLength(1);
});

test('delete_instance during a move: its migration ended and released, the guest terminated on both hosts', async () => {
  const { uuid, spec } = await apiCreate();
  await scheduleAndBuildInstancesHandler(deps(new FakeScheduler()))(cast(uuid, spec), ctx);
  await updateInstance(cell1Db.pool, uuid, { vmState: 'resized', host: 'h2', node: 'h2' });
  const { migration } = await createMigration(cell1Db.pool, {
    instanceUuid: uuid,
    migrationType: 'resize',
    status: 'finished',
    sourceCompute: 'h1',
    sourceNode: 'h1',
    destCompute: 'h2',
    destNode: 'h2',
  });
  const { migration: old } = await createMigration(cell1Db.pool, {
    instanceUuid: uuid,
    migrationType: 'migration',
    status: 'confirmed',
    sourceCompute: 'h3',
    destCompute: 'h1',
  });
  casts.length = 0;
  released.length = 0;
  await setInstanceMappingQueuedForDelete(apiDb.pool, uuid, true);
  await deleteInstanceHandler(deps(new FakeScheduler()))(
    { instanceUuid: uuid, cellUuid: CELL1, requestId: `req-del-${uuid}`, userId: 'u1', projectId: 'p1' },
    ctx,
  );
  expect(released).toEqual([uuid, migration.uuid]);
  expect(await getMigration(cell1Db.pool, migration.uuid)).toMatchObject({ status: 'error' });
  expect(await getMigration(cell1Db.pool, old.uuid)).toMatchObject({ status: 'confirmed' });
  expect(casts.map((c) => c.host).sort()).toEqual(['h1', 'h2']);
});

test("update_service: disabled (with its reason) in the cell DB and COMPUTE_STATUS_DISABLED on the host's node providers; enabling clears both; an unknown host changes nothing", async () => {
  const { service } = await upsertService(cell1Db.pool, { host: 'svc-h1', binary: 'nova-compute' });
  const nodes = [randomUUID(), randomUUID()];
  for (const uuid of nodes)
    await upsertComputeNode(cell1Db.pool, {
      uuid,
      serviceId: service.id,
      host: 'svc-h1',
      hypervisorHostname: `svc-h1-${uuid.slice(0, 4)}`,
      vcpus: 8,
      memoryMb: 4096,
      localGb: 100,
    });
  const traits: [string, boolean][] = [];
  const handler = updateServiceHandler(cells, {
    setComputeStatusDisabled: async (rp, disabled) => {
      traits.push([rp, disabled]);
    },
  });
  const req = {
    cellUuid: CELL1,
    host: 'svc-h1',
    binary: 'nova-compute',
    disabled: true,
    disabledReason: 'maintenance',
    requestId: 'req-svc',
  };
  await handler(req, ctx);
  expect(await getService(cell1Db.pool, 'svc-h1', 'nova-compute')).toMatchObject({ disabled: true, disabledReason: 'maintenance' });
  expect(traits.sort()).toEqual(nodes.map((n) => [n, true]).sort());
  traits.length = 0;
  await handler({ ...req, disabled: false, disabledReason: 'ignored when enabling' }, ctx);
  expect(await getService(cell1Db.pool, 'svc-h1', 'nova-compute')).toMatchObject({ disabled: false, disabledReason: null });
  expect(traits.sort()).toEqual(nodes.map((n) => [n, false]).sort());
  traits.length = 0;
  await handler({ ...req, host: 'no-such-host' }, ctx);
  expect(traits).toEqual([]);
  expect(await getService(cell1Db.pool, 'svc-h1', 'nova-compute')).toMatchObject({ disabled: false });
});

test('update_service forced_down: only_forced_down writes services.forced_down and leaves disabled and the trait alone; both at once in one cast', async () => {
  await upsertService(cell1Db.pool, { host: 'svc-h2', binary: 'nova-compute' });
  const traits: [string, boolean][] = [];
  const handler = updateServiceHandler(cells, {
    setComputeStatusDisabled: async (rp, disabled) => {
      traits.push([rp, disabled]);
    },
  });
  const req = { cellUuid: CELL1, host: 'svc-h2', binary: 'nova-compute', disabled: true, disabledReason: 'dead', requestId: 'req-down' };
  await handler(req, ctx);
  await handler({ ...req, disabled: false, disabledReason: '', forcedDown: true, onlyForcedDown: true }, ctx);
  expect(await getService(cell1Db.pool, 'svc-h2', 'nova-compute')).toMatchObject({
    forcedDown: true,
    disabled: true,
    disabledReason: 'dead',
  });
  await handler({ ...req, forcedDown: true, onlyForcedDown: true }, ctx); // a redelivery changes nothing
  expect(await getService(cell1Db.pool, 'svc-h2', 'nova-compute')).toMatchObject({ forcedDown: true, disabled: true });
  await handler({ ...req, disabled: false, disabledReason: '', forcedDown: false }, ctx);
  expect(await getService(cell1Db.pool, 'svc-h2', 'nova-compute')).toMatchObject({
    forcedDown: false,
    disabled: false,
    disabledReason: null,
  });
  await handler({ ...req, disabled: true }, ctx); // no forced_down field: left as it is
  expect(await getService(cell1Db.pool, 'svc-h2', 'nova-compute')).toMatchObject({ forcedDown: false, disabled: true });
});
