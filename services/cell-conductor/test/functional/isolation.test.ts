/**
 * Cell isolation by credentials: a cell conductor running with its cell's PostgreSQL role and
 * RabbitMQ user works in its cell, and the same credentials are refused by another vhost and
 * another database (as the API's would be).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { BusError } from '@cellsched/bus';
import { listServices } from '@cellsched/cell-db';
import { testInfra } from '@cellsched/config';
import { createPool, createTestDatabase, type TestDatabase } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { CellConductorServiceService } from '@cellsched/wire';
import { Client, type Pool } from 'pg';
import { startCellConductor, type RunningCellConductor } from '../../src/app';
import { Bus, createCellDb, createVhost, logger, rabbitmqctl, waitFor } from './harness';

const suffix = randomBytes(4).toString('hex');
const ROLE = `cstest_cell_${suffix}`;
const USER = `cstest-cell-${suffix}`;
let cellDb: TestDatabase;
let otherDb: TestDatabase;
let cellVhost: Awaited<ReturnType<typeof createVhost>>;
let otherVhost: Awaited<ReturnType<typeof createVhost>>;
let cellPool: Pool;
let cellBus: Bus;
let adminBus: Bus;
let placement: PlacementClient;
let conductor: RunningCellConductor;

function withCredentials(url: string, user: string, pass: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = pass;
  return u.toString();
}

async function admin(db: string, ...sql: string[]): Promise<void> {
  const u = new URL(testInfra().pgAdminUrl);
  u.pathname = `/${db}`;
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  try {
    for (const s of sql) await c.query(s);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  [cellDb, otherDb, cellVhost, otherVhost] = await Promise.all([
    createCellDb(),
    createTestDatabase({ prefix: 'cc_other' }),
    createVhost('cstest-cc-cell'),
    createVhost('cstest-cc-other'),
  ]);
  await admin(
    'postgres',
    `CREATE ROLE ${ROLE} LOGIN PASSWORD 'cellpw'`,
    `REVOKE CONNECT ON DATABASE ${otherDb.name} FROM PUBLIC`,
    `REVOKE CONNECT ON DATABASE ${cellDb.name} FROM PUBLIC`,
    `GRANT CONNECT ON DATABASE ${cellDb.name} TO ${ROLE}`,
  );
  await admin(
    cellDb.name,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${ROLE}`,
    `GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${ROLE}`,
  );
  await rabbitmqctl('add_user', USER, 'cellpw');
  await rabbitmqctl('set_permissions', '-p', cellVhost.name, USER, '.*', '.*', '.*');
  cellPool = createPool({ url: withCredentials(cellDb.url, ROLE, 'cellpw'), max: 4, applicationName: 'test-cell-conductor' });
  cellBus = await Bus.connect({ url: withCredentials(cellVhost.url, USER, 'cellpw'), logger });
  adminBus = await Bus.connect({ url: cellVhost.url, logger });
  placement = new PlacementClient({ addresses: ['127.0.0.1:1'], deadlineMs: 1000 });
  conductor = await startCellConductor({
    pool: cellPool,
    bus: cellBus,
    placement,
    logger,
    cellUuid: randomUUID(),
    buildTimeoutMs: 60_000,
    prefetch: 4,
    serviceDownTimeMs: 60_000,
    watchdogIntervalMs: 0,
    report: new ReportClient({ baseUrl: 'http://127.0.0.1:1' }),
    auditIntervalMs: 0,
    auditGraceMs: 1000,
  });
}, 60_000);

afterAll(async () => {
  await conductor?.stop();
  await cellBus?.close();
  await adminBus?.close();
  placement?.close();
  await cellPool?.end();
  await cellDb?.drop();
  await otherDb?.drop();
  await admin('postgres', `DROP ROLE IF EXISTS ${ROLE}`).catch(() => undefined);
  await rabbitmqctl('delete_user', USER).catch(() => undefined);
  await cellVhost?.dispose();
  await otherVhost?.dispose();
});

test('with its cell credentials the conductor records a compute registration', async () => {
  await adminBus.castClient(CellConductorServiceService).cast('reportComputeHosts', {
    hosts: [
      {
        host: 'iso-1',
        binary: 'nova-compute',
        topic: 'compute',
        serviceVersion: 1,
        computeNodeUuid: randomUUID(),
        hypervisorHostname: 'iso-1',
        vcpus: 2,
        memoryMb: 2048,
        localGb: 10,
        hypervisorType: 'fake',
        cpuAllocationRatio: 4,
        ramAllocationRatio: 1,
        diskAllocationRatio: 1,
        vcpusUsed: 0,
        memoryMbUsed: 0,
        localGbUsed: 0,
        runningVms: 0,
        supportedInstances: [],
        cpuInfo: '',
        stats: {},
      },
    ],
    computeProcess: '',
    incarnation: 0,
    hostSet: [],
  });
  const services = await waitFor('service row', async () => {
    const s = await listServices(cellDb.pool);
    return s.length > 0 ? s : undefined;
  });
  expect(services.map((s) => s.host)).toEqual(['iso-1']);
});

test("the cell's RabbitMQ user is refused by another vhost", async () => {
  const err = await Bus.connect({ url: withCredentials(otherVhost.url, USER, 'cellpw'), logger, connectTimeoutMs: 3000 }).catch(
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BusError);
  expect((err as BusError).code).toBe('bus.connection.access_refused');
});

test("the cell's PostgreSQL role is refused by another database", async () => {
  const c = new Client({ connectionString: withCredentials(otherDb.url, ROLE, 'cellpw') });
  const err = await c.connect().then(
    () => undefined,
    (e: unknown) => e as { code?: string },
  );
  await c.end().catch(() => undefined);
  expect(err?.code).toBe('42501'); // insufficient_privilege: permission denied for database
});
