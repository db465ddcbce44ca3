/**
 * The scheduler follows cell_mappings on a running replica (no restart, no SIGHUP), against real
 * PostgreSQL and placement: a disabled cell gets no new builds and an enabled one gets them
 * again, a cell created at run time is read and chosen, a deleted one is dropped with its
 * connections, a cell whose database is down does not stop the others. The replica reads as its
 * own read-only role (granted as `cellsched-manage ... --read-only-role scheduler=ROLE` grants).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  addHostMappings,
  createCellMapping,
  deleteCellMapping,
  deleteHostMapping,
  grantApiDbReads,
  listHostMappings,
  setCellMappingDisabled,
  updateCellMapping,
} from '@cellsched/api-db';
import { CELL_DB_MIGRATIONS_DIR, getService, grantCellDbReads, setServiceDisabled } from '@cellsched/cell-db';
import { testInfra } from '@cellsched/config';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { Client } from 'pg';
import { seedHosts } from '../../../../e2e/bench/scheduler/seed';
import type { SchedulerApp } from '../../src/app';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

const ROLE = `sched_ro_${randomBytes(4).toString('hex')}`;
const AS = { user: ROLE, password: `${ROLE}-pw` };
const REFRESH_MS = 200;
/** Past this idle time a request waits for a fresh read (the host cache's maxStale: 3 x refresh). */
const BOUND_MS = 3 * REFRESH_MS + 100;
const size = { vcpus: 64, memoryMb: 65536, diskGb: 1000 };
let cloud: RealCloud;
let app: SchedulerApp;
let client: SchedulerClient;
let cell3: TestDatabase | undefined;
let moved: TestDatabase | undefined;
const CELL3 = randomUUID();
const CELL4 = randomUUID();

async function asAdmin<T>(fn: (c: Client) => Promise<T>, db = 'postgres'): Promise<T> {
  const u = new URL(testInfra().pgAdminUrl);
  u.pathname = `/${db}`;
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cellUuid = (i: number): string => (cloud.cells[i] as RealCloud['cells'][0]).uuid;

/** Chosen cells of `n` single-server requests (various seeds), or 'NoValidHost' with the diagnosis filters. */
async function choices(n = 12): Promise<string[]> {
  const out: string[] = [];
  for (let seed = 1; seed <= n; seed++) {
    const r = await select(client, requestSpec({ seed }), [randomUUID()]);
    if (r.ok) out.push(r.res.destinations[0]?.selections[0]?.cellUuid ?? '?');
    else
      out.push(
        `NoValidHost ${(r.err.failure?.diagnosis as { filter: string; hostsAfter: number }[] | undefined)?.map((d) => `${d.filter}:${d.hostsAfter}`).join(',') ?? r.err.message}`,
      );
  }
  return [...new Set(out)].sort();
}

/** Sessions on a database by this test's replica, as user names. */
async function replicaSessions(db: string): Promise<string[]> {
  return asAdmin(async (c) =>
    (
      await c.query<{ u: string }>(
        "SELECT usename AS u FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'scheduler-cell-%'",
        [db],
      )
    ).rows.map((r) => r.u),
  );
}

beforeAll(async () => {
  cloud = await startRealCloud('sched_cells');
  await asAdmin((c) => c.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${AS.password}'`));
  await grantApiDbReads(cloud.apiDb.pool, 'scheduler', ROLE);
  for (const c of cloud.cells) await grantCellDbReads(c.db.pool, 'scheduler', ROLE);
  await cloud.addHosts([0, 1, 2, 3, 4, 5].map((i) => ({ host: `cells-${i}`, cell: i % 2, ...size })));
  ({ app, client } = await cloud.startReplica({}, { as: AS, hostCacheRefreshMs: REFRESH_MS, candidateCacheTtlMs: 0 }));
}, 120_000);

afterAll(async () => {
  await cloud?.close();
  await cell3?.drop();
  await moved?.drop();
  await asAdmin((c) => c.query(`DROP ROLE IF EXISTS ${ROLE}`));
});

test("the replica reads every cell as its own read-only role, never as the cell mapping's owner", async () => {
  expect(await choices()).toEqual([cellUuid(0), cellUuid(1)].sort());
  for (const c of cloud.cells) expect(new Set(await replicaSessions(c.db.name))).toEqual(new Set([ROLE]));
});

test('a cell disabled at run time gets no new builds; enabled, it gets them again', async () => {
  await setCellMappingDisabled(cloud.apiDb.pool, cellUuid(0), true);
  await sleep(BOUND_MS);
  expect(await choices()).toEqual([cellUuid(1)]);
  await setCellMappingDisabled(cloud.apiDb.pool, cellUuid(1), true);
  await sleep(BOUND_MS);
  expect(await choices(1)).toEqual(['NoValidHost allocation_candidates:6,host_state_snapshot:6,disabled_cells:0']);
  await setCellMappingDisabled(cloud.apiDb.pool, cellUuid(0), false);
  await sleep(BOUND_MS);
  expect(await choices()).toEqual([cellUuid(0)]);
});

test('a cell created at run time (mapped, synced, granted) is read and chosen without a restart', async () => {
  cell3 = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'sched_cells_c3', poolMax: 2 });
  await grantCellDbReads(cell3.pool, 'scheduler', ROLE);
  await seedHosts(
    [cell3.pool],
    cloud.placementDb.pool,
    [0, 1].map((i) => ({ host: `cells-new-${i}`, cell: 0, ...size })),
  );
  const before = app.cache.size;
  const { cell } = await createCellMapping(cloud.apiDb.pool, {
    uuid: CELL3,
    name: 'cell3',
    transportUrl: 'amqp://127.0.0.1:5672/sched_cells_c3',
    databaseConnection: cell3.url,
  });
  await addHostMappings(cloud.apiDb.pool, cell.id, ['cells-new-0', 'cells-new-1']); // as discover_hosts leaves them: an unmapped host is never chosen
  await setCellMappingDisabled(cloud.apiDb.pool, cellUuid(0), true);
  await sleep(BOUND_MS);
  expect(await choices()).toEqual([CELL3]);
  expect(app.cache.size).toBe(before + 2);
  expect(await replicaSessions(cell3.name)).toContain(ROLE);
});

test('a cell whose database is down does not stop the others: their changes are still followed', async () => {
  const down = new URL(cloud.cells[0]?.db.url ?? '');
  down.pathname = '/sched_cells_no_such_database';
  await createCellMapping(cloud.apiDb.pool, {
    uuid: CELL4,
    name: 'cell4',
    transportUrl: 'amqp://127.0.0.1:5672/sched_cells_c4',
    databaseConnection: down.toString(),
  });
  const db = (cell3 as TestDatabase).pool;
  const svc = await getService(db, 'cells-new-0', 'nova-compute');
  await setServiceDisabled(db, svc?.id ?? 0, true, 'maintenance');
  await sleep(BOUND_MS);
  expect(await choices()).toEqual([CELL3]);
  await expect(app.cache.refresh()).rejects.toThrow(/sched_cells_no_such_database|does not exist/);
  const hosts = new Set<string>();
  for (let seed = 1; seed <= 8; seed++) {
    const r = await select(client, requestSpec({ seed }), [randomUUID()]);
    if (r.ok) hosts.add(r.res.destinations[0]?.selections[0]?.serviceHost ?? '');
  }
  expect([...hosts]).toEqual(['cells-new-1']);
  await setServiceDisabled(db, svc?.id ?? 0, false, null);
  await deleteCellMapping(cloud.apiDb.pool, CELL4);
});

test('a cell whose database moved (update_cell --database_connection) is read from the new one, and the old connections close', async () => {
  moved = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'sched_cells_mv', poolMax: 2 });
  await grantCellDbReads(moved.pool, 'scheduler', ROLE);
  await seedHosts([moved.pool], cloud.placementDb.pool, [{ host: 'cells-moved-0', cell: 0, ...size }]);
  const before = app.cache.size;
  const cell = await updateCellMapping(cloud.apiDb.pool, CELL3, { databaseConnection: moved.url });
  await addHostMappings(cloud.apiDb.pool, cell?.id ?? 0, ['cells-moved-0']);
  await sleep(BOUND_MS);
  const hosts = new Set<string>();
  for (let seed = 1; seed <= 6; seed++) {
    const r = await select(client, requestSpec({ seed }), [randomUUID()]);
    if (!r.ok) throw r.err;
    hosts.add(`${r.res.destinations[0]?.selections[0]?.cellUuid === CELL3} ${r.res.destinations[0]?.selections[0]?.serviceHost}`);
  }
  expect([...hosts]).toEqual(['true cells-moved-0']);
  expect(app.cache.size).toBe(before - 1);
  expect(await replicaSessions((cell3 as TestDatabase).name)).toEqual([]);
  expect(await replicaSessions(moved.name)).toContain(ROLE);
});

test('a deleted cell is dropped: its hosts leave the cache, its connections close, the others go on', async () => {
  const before = app.cache.size;
  await setCellMappingDisabled(cloud.apiDb.pool, cellUuid(0), false);
  // as delete_cell --force: the cell's host mappings go first
  for (const m of await listHostMappings(cloud.apiDb.pool, { cellUuid: CELL3 }))
    await deleteHostMapping(cloud.apiDb.pool, m.host, { cellUuid: CELL3 });
  await deleteCellMapping(cloud.apiDb.pool, CELL3);
  await sleep(BOUND_MS);
  expect(await choices()).toEqual([cellUuid(0)]);
  expect(app.cache.size).toBe(before - 1);
  expect(await replicaSessions((moved as TestDatabase).name)).toEqual([]);
});
