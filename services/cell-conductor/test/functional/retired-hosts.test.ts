/**
 * Hosts that stop existing, at the cell level, against real PostgreSQL, RabbitMQ and placement:
 * a simulated-compute process restarted with fewer hosts reports its whole host set, and the cell
 * conductor retires its other hosts (services and nodes soft-deleted, providers deleted from
 * placement, or kept unschedulable while an ACTIVE instance still holds an allocation there).
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { getInstance, listComputeNodes, listServices, softDeleteInstance } from '@cellsched/cell-db';
import type { TestDatabase } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import pino from 'pino';
import { registerHosts } from '../../../simulated-compute/src/adapters/registration';
import { simulatedHosts } from '../../../simulated-compute/src/domain/hosts';
import { startCellConductor, type RunningCellConductor } from '../../src/app';
import { startSimulatedComputeForTest, type TestCompute } from './compute-support';
import {
  Bus,
  buildServices,
  createCellDb,
  createVhost,
  logger,
  selectionFor,
  startPlacement,
  superConductorStep,
  waitFor,
  type PlacementProcess,
} from './harness';

const CELL = randomUUID();
let cellDb: TestDatabase;
let vhost: Awaited<ReturnType<typeof createVhost>>;
let placementProc: PlacementProcess;
let placement: PlacementClient;
let report: ReportClient;
let bus: Bus;
let conductor: RunningCellConductor;
let compute: TestCompute | undefined;
/** The conductor's log records (its warnings say what it ignored). */
const logged: { msg: string }[] = [];

beforeAll(async () => {
  buildServices();
  [cellDb, vhost, placementProc] = await Promise.all([createCellDb(), createVhost('cstest-retire'), startPlacement()]);
  placement = new PlacementClient({ addresses: [placementProc.grpcAddress], deadlineMs: 10_000 });
  report = new ReportClient({ baseUrl: placementProc.restUrl });
  // NOTE: handlers log through the bus's logger (per cast), so it is the one captured
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') logged.push(JSON.parse(l) as { msg: string });
      done();
    },
  });
  bus = await Bus.connect({ url: vhost.url, logger: pino({ level: 'info' }, sink) });
  conductor = await startCellConductor({
    pool: cellDb.pool,
    bus,
    placement,
    logger,
    cellUuid: CELL,
    buildTimeoutMs: 60_000,
    prefetch: 8,
    serviceDownTimeMs: 60_000,
    watchdogIntervalMs: 0,
    report,
    auditIntervalMs: 0,
    auditGraceMs: 1000,
  });
}, 120_000);

afterAll(async () => {
  await compute?.running.stop();
  await conductor?.stop();
  await bus?.close();
  placement?.close();
  await placementProc?.stop();
  await cellDb?.drop();
  await vhost?.dispose();
});

/** (Re)starts the process `ret-1` (one queue, one name) with `n` hosts `ret-1..ret-n`. */
async function restartWith(n: number): Promise<TestCompute> {
  await compute?.running.stop();
  compute = await startSimulatedComputeForTest({ url: vhost.url, report, cell: 'c1', prefix: 'ret-', hosts: n });
  return compute;
}

const liveHosts = async (): Promise<string[]> => (await listServices(cellDb.pool, { binary: 'nova-compute' })).map((s) => s.host);
const provider = async (uuid: string): Promise<{ status: number; traits: string[] }> => {
  const h = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
  const r = await fetch(`${placementProc.restUrl}/resource_providers/${uuid}/traits`, { headers: h });
  return { status: r.status, traits: r.status === 200 ? ((await r.json()) as { traits: string[] }).traits : [] };
};

/** The one live instance on `host`. */
async function instanceOn(host: string): Promise<string> {
  const r = await cellDb.pool.query<{ uuid: string }>('SELECT uuid::text FROM instances WHERE host = $1 AND deleted_at IS NULL', [host]);
  if (r.rows.length !== 1 || r.rows[0] === undefined) throw new Error(`expected one instance on ${host}, found ${r.rows.length}`);
  return r.rows[0].uuid;
}

test('a process restarted with fewer hosts retires the others at once; an ACTIVE instance there keeps its host, state and allocation', async () => {
  const first = await restartWith(4);
  await waitFor('4 hosts registered', async () => ((await liveHosts()).length === 4 ? true : undefined));
  const [h3, h4] = [first.hosts[2], first.hosts[3]];
  if (h3 === undefined || h4 === undefined) throw new Error('hosts missing');
  // an ACTIVE instance on ret-4 (the super-conductor's step, then the build on the compute)
  const uuid = randomUUID();
  const chosen = selectionFor(h4.host, h4.computeNodeUuid, CELL);
  const inst = await superConductorStep(cellDb, placement, uuid, [chosen]);
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
        host: h4.host,
        node: h4.host,
        availabilityZone: '',
        cellUuid: CELL,
        createdAt: undefined,
        launchedAt: undefined,
        reservationId: '',
        launchIndex: 0,
      },
      requestSpec: undefined,
      hostList: [chosen],
      attempt: 1,
      requestId: `req-${uuid}`,
    },
    { server: h4.host },
  );
  await waitFor('ACTIVE on ret-4', async () => ((await getInstance(cellDb.pool, uuid))?.vmState === 'active' ? true : undefined));

  await restartWith(2);
  // the restart's report (its whole host set) retires ret-3 and ret-4
  await waitFor('ret-3 and ret-4 retired', async () => ((await liveHosts()).join() === 'ret-1,ret-2' ? true : undefined));
  expect((await listComputeNodes(cellDb.pool)).map((n) => n.host)).toEqual(['ret-1', 'ret-2']);
  // ret-3 held nothing: its provider is gone; ret-4 holds the ACTIVE instance's allocation: kept, unschedulable
  await waitFor('ret-3 provider deleted', async () => ((await provider(h3.computeNodeUuid)).status === 404 ? true : undefined));
  await waitFor('ret-4 provider disabled', async () =>
    (await provider(h4.computeNodeUuid)).traits.includes('COMPUTE_STATUS_DISABLED') ? true : undefined,
  );
  expect(await getInstance(cellDb.pool, uuid)).toMatchObject({ vmState: 'active', host: 'ret-4' });
  expect((await placement.consumerAllocations(uuid))?.allocations.map((a) => a.resourceProviderUuid)).toEqual([h4.computeNodeUuid]);

  // once the instance is deleted (its allocation released), the next sweep deletes the provider
  await placement.release([uuid]);
  await softDeleteInstance(cellDb.pool, uuid);
  expect(await conductor.removeRetiredProviders()).toEqual({ deleted: [h4.computeNodeUuid], kept: [], returned: [] });
  expect((await provider(h4.computeNodeUuid)).status).toBe(404);
  expect(await conductor.removeRetiredProviders()).toEqual({ deleted: [], kept: [], returned: [] });
}, 120_000);

test('a late report of an earlier run of the process brings no retired host back', async () => {
  expect(await liveHosts()).toEqual(['ret-1', 'ret-2']);
  const conductorClient = bus.castClient(CellConductorServiceService);
  // the 4-host run's report (an earlier start time than the running 2-host process) arrives now
  await registerHosts(
    conductorClient,
    simulatedHosts('c1', 'ret-', 4),
    { vcpus: 4, memoryMb: 4096, localGb: 100 },
    { computeProcess: 'ret-1', incarnation: 1 },
  );
  await waitFor('the stale report ignored', async () =>
    logged.some((l) => l.msg === 'report of an earlier run of the compute process ignored') ? true : undefined,
  );
  expect(await liveHosts()).toEqual(['ret-1', 'ret-2']);
});

test('hosts that come back are new services, unmapped until discovered', async () => {
  const ret1 = (await listServices(cellDb.pool, { host: 'ret-1' }))[0]?.uuid;
  const retired = (await cellDb.pool.query<{ uuid: string }>("SELECT uuid::text FROM services WHERE host = 'ret-3'")).rows.map(
    (r) => r.uuid,
  );
  const back = await restartWith(3);
  await waitFor('ret-3 back', async () => ((await liveHosts()).join() === 'ret-1,ret-2,ret-3' ? true : undefined));
  const services = await listServices(cellDb.pool, { binary: 'nova-compute' });
  expect(services.find((s) => s.host === 'ret-1')?.uuid).toBe(ret1);
  expect(retired).toHaveLength(1);
  expect(retired).not.toContain(services.find((s) => s.host === 'ret-3')?.uuid);
  const nodes = await listComputeNodes(cellDb.pool, { host: 'ret-3' });
  expect(nodes.map((n) => [n.uuid, n.mapped, n.serviceId])).toEqual([
    [back.hosts[2]?.computeNodeUuid, 0, services.find((s) => s.host === 'ret-3')?.id],
  ]);
  expect((await provider(back.hosts[2]?.computeNodeUuid ?? '')).status).toBe(200);
});

test('a retired host still holding an ACTIVE instance that comes back is schedulable again: its provider is neither disabled nor deleted', async () => {
  const three = compute?.hosts[2];
  if (three === undefined) throw new Error('ret-3 missing');
  const uuid = randomUUID();
  const chosen = selectionFor(three.host, three.computeNodeUuid, CELL);
  const inst = await superConductorStep(cellDb, placement, uuid, [chosen]);
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
        host: three.host,
        node: three.host,
        availabilityZone: '',
        cellUuid: CELL,
        createdAt: undefined,
        launchedAt: undefined,
        reservationId: '',
        launchIndex: 0,
      },
      requestSpec: undefined,
      hostList: [chosen],
      attempt: 1,
      requestId: `req-${uuid}`,
    },
    { server: three.host },
  );
  await waitFor('ACTIVE on ret-3', async () => ((await getInstance(cellDb.pool, uuid))?.vmState === 'active' ? true : undefined));
  await restartWith(2);
  await waitFor('ret-3 kept, disabled', async () =>
    (await provider(three.computeNodeUuid)).traits.includes('COMPUTE_STATUS_DISABLED') ? true : undefined,
  );
  await restartWith(3);
  await waitFor('ret-3 back', async () => ((await liveHosts()).join() === 'ret-1,ret-2,ret-3' ? true : undefined));
  // the compute's own report (traits replaced) re-enabled it, and nothing disables or deletes it afterwards
  await waitFor('ret-3 enabled', async () =>
    !(await provider(three.computeNodeUuid)).traits.includes('COMPUTE_STATUS_DISABLED') ? true : undefined,
  );
  expect(await conductor.removeRetiredProviders()).toEqual({ deleted: [], kept: [], returned: [] });
  expect((await provider(three.computeNodeUuid)).traits).toEqual(['COMPUTE_NODE']);
  expect((await placement.consumerAllocations(uuid))?.allocations.map((a) => a.resourceProviderUuid)).toEqual([three.computeNodeUuid]);
});

test("the allocation audit reads a retired host's kept provider: an ACTIVE instance there is rightly held (not missing), a deleted one's allocation there is healed, then the provider goes", async () => {
  const three = compute?.hosts[2];
  if (three === undefined) throw new Error('ret-3 missing');
  // the ACTIVE instance of the previous test is on ret-3; the process restarts without it
  const uuid = await instanceOn('ret-3');
  expect((await placement.consumerAllocations(uuid))?.allocations.map((a) => a.resourceProviderUuid)).toEqual([three.computeNodeUuid]);
  await restartWith(2);
  await waitFor('ret-3 retired, provider kept disabled', async () =>
    (await provider(three.computeNodeUuid)).traits.includes('COMPUTE_STATUS_DISABLED') ? true : undefined,
  );
  expect(await liveHosts()).toEqual(['ret-1', 'ret-2']);

  const t0 = Date.now();
  const first = await conductor.runAudit(t0);
  expect(first).toMatchObject({ providers: 3, missing: [], suspects: 0, healed: [], unknownProviders: 0 });
  expect(await getInstance(cellDb.pool, uuid)).toMatchObject({ vmState: 'active', host: 'ret-3' });

  // the instance goes without its allocation being released (a leak on the retired provider): healed after the grace period
  await softDeleteInstance(cellDb.pool, uuid);
  expect((await conductor.runAudit(t0 + 100)).suspects).toBe(1);
  const second = await conductor.runAudit(t0 + 1500);
  expect(second.healed.map((h) => [h.consumerUuid, h.providerUuid, h.reason])).toEqual([[uuid, three.computeNodeUuid, 'leak']]);
  expect(await placement.consumerAllocations(uuid)).toBeUndefined();
  // nothing holds the provider any more: the sweep deletes it, and the audit stops reading it
  expect(await conductor.removeRetiredProviders()).toEqual({ deleted: [three.computeNodeUuid], kept: [], returned: [] });
  expect((await conductor.runAudit(t0 + 3000)).providers).toBe(2);
});
