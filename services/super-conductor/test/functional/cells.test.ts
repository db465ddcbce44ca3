// The super-conductor's cells follow cell_mappings on a running process, against real
// PostgreSQL and RabbitMQ: a cell created at run time is opened (its bus carries casts), a
// disabled one stays open (its servers can still be deleted), a deleted one is closed, a bad
// or unreachable one is refused or retried without holding up the others.
import { randomUUID } from 'node:crypto';
import { API_DB_MIGRATIONS_DIR, createCellMapping, deleteCellMapping, setCellMappingDisabled, updateCellMapping } from '@cellsched/api-db';
import { Bus } from '@cellsched/bus';
import { CELL_DB_MIGRATIONS_DIR } from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { createPool, createTestDatabase, type TestDatabase } from '@cellsched/db';
import { ComputeServiceService, type TerminateInstanceRequest } from '@cellsched/wire';
import pino from 'pino';
import { cellOpener } from '../../src/adapters/cell-opener';
import { CellNotOpenError, CellRegistry } from '../../src/adapters/cells';
import { isTransient } from '@cellsched/transient-retry';
import { createVhost, waitFor, type TestVhost } from '../../../../packages/bus/test/support/broker';

const log = pino({ level: 'silent' });
const CELL1 = randomUUID();
const CELL2 = randomUUID();
const CELL3 = randomUUID();
let apiDb: TestDatabase;
let dbs: TestDatabase[];
let vhosts: TestVhost[];
let registry: CellRegistry;
const extra: Bus[] = [];

beforeAll(async () => {
  apiDb = await createTestDatabase({ kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, prefix: 'sc_cells_api', poolMax: 2 });
  dbs = await Promise.all(
    ['c0', 'c1', 'c2'].map((p) =>
      createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: `sc_cells_${p}`, poolMax: 1 }),
    ),
  );
  vhosts = await Promise.all(['sc-cells-1', 'sc-cells-2'].map((p) => createVhost(p)));
  await createCellMapping(apiDb.pool, {
    uuid: CELL0_UUID,
    name: 'cell0',
    transportUrl: 'none:///',
    databaseConnection: (dbs[0] as TestDatabase).url,
  });
  await createCellMapping(apiDb.pool, {
    uuid: CELL1,
    name: 'cell1',
    transportUrl: (vhosts[0] as TestVhost).url,
    databaseConnection: (dbs[1] as TestDatabase).url,
  });
  registry = new CellRegistry(
    apiDb.pool,
    cellOpener({
      pool: (url, name) => createPool({ url, max: 2, applicationName: `sc-cells-test-${name}` }),
      bus: (url, name) => Bus.connect({ url, logger: log, name, connectTimeoutMs: 1500 }),
    }),
    log,
  );
  await registry.refresh();
}, 60_000);

afterAll(async () => {
  await registry?.close();
  for (const b of extra) await b.close();
  for (const v of vhosts ?? []) await v.dispose();
  await Promise.all([apiDb, ...(dbs ?? [])].map((d) => d?.drop()));
});

/** Backends of this test's pools on a cell database (the registry's connections to it). */
async function connectionsTo(db: TestDatabase, name: string): Promise<number> {
  const r = await apiDb.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
    [db.name, `sc-cells-test-${name}`],
  );
  return Number(r.rows[0]?.n);
}

/** A compute serving `compute.<host>` on a vhost; resolves the terminate casts it receives. */
async function computeOn(vhost: TestVhost, host: string): Promise<TerminateInstanceRequest[]> {
  const got: TerminateInstanceRequest[] = [];
  const bus = await Bus.connect({ url: vhost.url, logger: log, name: `compute-${host}` });
  extra.push(bus);
  await bus.serve(
    ComputeServiceService,
    {
      terminateInstance: async (req) => {
        got.push(req);
      },
    },
    { server: host },
  );
  return got;
}

test('cell0 and the mapped cells are open at the first refresh; an unknown cell is a retryable miss', async () => {
  expect(registry.cell0.pool).toBeDefined();
  expect(registry.cell0.compute).toBeUndefined();
  expect(registry.cell(CELL1).name).toBe('cell1');
  expect(await registry.mappingId(CELL1)).toEqual(expect.any(Number));
  const miss = (() => {
    try {
      registry.cell(CELL2);
      return undefined;
    } catch (err) {
      return err;
    }
  })();
  expect(miss).toBeInstanceOf(CellNotOpenError);
  expect(isTransient(miss)).toBe(true); // the handler's cast is retried in-delivery, not dead-lettered
});

test('a cell created at run time is opened by the miss that names it: its bus carries casts to its computes', async () => {
  const received = await computeOn(vhosts[1] as TestVhost, 'c2-host-1');
  await createCellMapping(apiDb.pool, {
    uuid: CELL2,
    name: 'cell2',
    transportUrl: (vhosts[1] as TestVhost).url,
    databaseConnection: (dbs[2] as TestDatabase).url,
  });
  expect(() => registry.cell(CELL2)).toThrow(CellNotOpenError); // starts the re-read
  const cell2 = await waitFor(
    'cell2 to be opened',
    () => {
      try {
        return registry.cell(CELL2);
      } catch {
        return undefined;
      }
    },
    10_000,
    50,
  );
  await cell2.compute?.cast('terminateInstance', { instanceUuid: randomUUID(), attempt: 1, reason: 'test' }, { server: 'c2-host-1' });
  await waitFor("the cast to arrive on cell2's vhost", () => (received.length === 1 ? true : undefined));
  expect((await cell2.pool.query<{ d: string }>('SELECT current_database() AS d')).rows[0]?.d).toBe((dbs[2] as TestDatabase).name);
});

test('a disabled cell stays open (its servers are still deleted through it); enabling changes nothing either', async () => {
  const before = registry.cell(CELL1);
  await setCellMappingDisabled(apiDb.pool, CELL1, true);
  expect((await registry.refresh()).updated.map((m) => m.uuid)).toEqual([CELL1]);
  expect(registry.cell(CELL1)).toBe(before);
  await setCellMappingDisabled(apiDb.pool, CELL1, false);
  expect((await registry.refresh()).updated.map((m) => m.uuid)).toEqual([CELL1]);
  expect(registry.cell(CELL1)).toBe(before);
});

test("a mapping that shares another cell's vhost is refused and changes nothing; an unreachable cell is retried, the others go on", async () => {
  const cell2 = registry.cell(CELL2);
  await updateCellMapping(apiDb.pool, CELL2, { transportUrl: (vhosts[0] as TestVhost).url });
  const refused = await registry.refresh();
  expect(refused.refused.map((r) => r.mapping.uuid).sort()).toEqual([CELL1, CELL2].sort());
  expect([registry.cell(CELL1).name, registry.cell(CELL2)]).toEqual(['cell1', cell2]);
  await updateCellMapping(apiDb.pool, CELL2, { transportUrl: (vhosts[1] as TestVhost).url });
  const unreachable = await createVhost('sc-cells-noperm', null);
  vhosts.push(unreachable);
  await createCellMapping(apiDb.pool, {
    uuid: CELL3,
    name: 'cell3',
    transportUrl: unreachable.url,
    databaseConnection: (dbs[0] as TestDatabase).url.replace(/\/[^/]*$/, '/sc_cells_nowhere'),
  });
  const r = await registry.refresh();
  expect(r.failed.map((f) => f.mapping.uuid)).toEqual([CELL3]);
  expect(() => registry.cell(CELL3)).toThrow(CellNotOpenError);
  expect([registry.cell(CELL1).name, registry.cell(CELL2)]).toEqual(['cell1', cell2]);
  await deleteCellMapping(apiDb.pool, CELL3);
  expect((await registry.refresh()).failed).toEqual([]);
}, 30_000);

test('a refresh asked while one is under way reads after it: a change made meanwhile is seen', async () => {
  const first = registry.refresh();
  const second = registry.refresh();
  expect(second).not.toBe(first); // the read under way may have started before the caller's change
  expect(registry.refresh()).toBe(second); // calls made meanwhile share the one read that follows
  await Promise.all([first, second]);
  const before = registry.refresh();
  await setCellMappingDisabled(apiDb.pool, CELL1, true);
  const after = registry.refresh();
  await before;
  expect((await after).updated.map((m) => m.uuid)).toEqual([CELL1]);
  await setCellMappingDisabled(apiDb.pool, CELL1, false);
  expect((await registry.refresh()).updated.map((m) => m.uuid)).toEqual([CELL1]);
});

test('a deleted cell is closed: its pool ends, casts through it are refused, lookups miss', async () => {
  const cell2 = registry.cell(CELL2);
  await cell2.pool.query('SELECT 1');
  expect(await connectionsTo(dbs[2] as TestDatabase, 'cell2')).toBeGreaterThan(0);
  await deleteCellMapping(apiDb.pool, CELL2);
  expect((await registry.refresh()).removed.map((m) => m.uuid)).toEqual([CELL2]);
  expect(() => registry.cell(CELL2)).toThrow(CellNotOpenError);
  await waitFor(
    "cell2's connections to close",
    async () => ((await connectionsTo(dbs[2] as TestDatabase, 'cell2')) === 0 ? true : undefined),
    5000,
    50,
  );
  await expect(
    cell2.compute?.cast('terminateInstance', { instanceUuid: randomUUID(), attempt: 1, reason: 'test' }, { server: 'c2-host-1' }),
  ).rejects.toThrow();
  expect(registry.cell(CELL1).name).toBe('cell1');
});
