import { randomUUID } from 'node:crypto';
import {
  API_DB_MIGRATIONS_DIR,
  createCellMapping,
  createInstanceMapping,
  deleteInstanceMapping,
  discoverHosts,
  getCellMapping,
  getHostMapping,
  type CellMapping,
} from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import { CELL_DB_MIGRATIONS_DIR, createInstance, listComputeNodes, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { buildManage, manage } from './cli-support';

let api: TestDatabase;
let cellDb: TestDatabase;
let otherDb: TestDatabase;
let cell: CellMapping;
let other: CellMapping;
const run = (...args: string[]) => manage(['--api-db-url', api.url, ...args]);
const flavor = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };

async function addCompute(db: TestDatabase, host: string): Promise<void> {
  const { service } = await upsertService(db.pool, { host, binary: 'nova-compute' });
  await upsertComputeNode(db.pool, {
    uuid: randomUUID(),
    serviceId: service.id,
    host,
    hypervisorHostname: host,
    vcpus: 1,
    memoryMb: 1,
    localGb: 1,
  });
}
const discover = () => discoverHosts(api.pool, { cellDb: (c) => (c.uuid === cell.uuid ? cellDb.pool : otherDb.pool) });

beforeAll(async () => {
  buildManage();
  [api, cellDb, otherDb] = await Promise.all([
    createTestDatabase({ prefix: 'mng_adm_api', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, poolMax: 2 }),
    createTestDatabase({ prefix: 'mng_adm_c1', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, poolMax: 2 }),
    createTestDatabase({ prefix: 'mng_adm_c2', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, poolMax: 2 }),
  ]);
  await createCellMapping(api.pool, {
    uuid: CELL0_UUID,
    name: 'cell0',
    transportUrl: 'none:///',
    databaseConnection: 'postgres://unused/cell0',
  });
  cell = (await createCellMapping(api.pool, { name: 'cell1', transportUrl: 'amqp://u:p@127.0.0.1/c1', databaseConnection: cellDb.url }))
    .cell;
  other = (await createCellMapping(api.pool, { name: 'cell2', transportUrl: 'amqp://u:p@127.0.0.1/c2', databaseConnection: otherDb.url }))
    .cell;
  await addCompute(cellDb, 'h1');
  await addCompute(cellDb, 'h2');
  await addCompute(otherDb, 'o1');
  await discover();
}, 120_000);
afterAll(async () => {
  for (const d of [api, cellDb, otherDb] as (TestDatabase | undefined)[]) await d?.drop();
});

describe('cellsched-manage cell_v2 delete_host / update_cell / delete_cell', () => {
  it("delete_host follows Nova's exit codes and lets discover_hosts find the host again", async () => {
    const missing = randomUUID();
    expect(await run('cell_v2', 'delete_host', '--cell_uuid', missing, '--host', 'h1')).toEqual({
      code: 1,
      stdout: '',
      stderr: `Cell with uuid ${missing} was not found.\n`,
    });
    expect((await run('cell_v2', 'delete_host', '--cell_uuid', cell.uuid, '--host', 'nope')).code).toBe(2);
    expect((await run('cell_v2', 'delete_host', '--cell_uuid', cell.uuid, '--host', 'o1')).stderr).toBe(
      `The host o1 was not found in the cell ${cell.uuid}.\n`,
    );
    await createInstance(cellDb.pool, { uuid: randomUUID(), projectId: 'p', userId: 'u', flavor, vmState: 'active', host: 'h2' });
    expect(await run('cell_v2', 'delete_host', '--cell_uuid', cell.uuid, '--host', 'h2')).toEqual({
      code: 4,
      stdout: '',
      stderr: 'There are instances on the host h2.\n',
    });
    expect(await run('cell_v2', 'delete_host', '--cell_uuid', cell.uuid, '--host', 'h1')).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await getHostMapping(api.pool, 'h1')).toBeUndefined();
    expect((await listComputeNodes(cellDb.pool, { host: 'h1' })).map((n) => n.mapped)).toEqual([0]);
    expect(await discover()).toEqual(['h1']);
    expect((await run('cell_v2', 'delete_host', '--cell_uuid', cell.uuid)).code).toBe(2);
  });

  it('update_cell renames, disables/enables, and refuses conflicts', async () => {
    expect((await run('cell_v2', 'update_cell', '--cell_uuid', cell.uuid, '--name', 'renamed', '--disable')).code).toBe(0);
    expect(await getCellMapping(api.pool, cell.uuid)).toMatchObject({ name: 'renamed', disabled: true, transportUrl: cell.transportUrl });
    expect(await run('cell_v2', 'update_cell', '--cell_uuid', cell.uuid, '--disable')).toEqual({
      code: 0,
      stdout: `Cell ${cell.uuid} is already disabled\n`,
      stderr: '',
    });
    expect((await run('cell_v2', 'update_cell', '--cell_uuid', cell.uuid, '--enable')).code).toBe(0);
    expect((await getCellMapping(api.pool, cell.uuid))?.disabled).toBe(false);
    expect((await run('cell_v2', 'update_cell', '--cell_uuid', cell.uuid, '--enable', '--disable')).code).toBe(4);
    expect(await run('cell_v2', 'update_cell', '--cell_uuid', CELL0_UUID, '--disable')).toEqual({
      code: 5,
      stdout: '',
      stderr: 'Cell0 cannot be disabled.\n',
    });
    const clash = await run(
      'cell_v2',
      'update_cell',
      '--cell_uuid',
      cell.uuid,
      '--transport-url',
      other.transportUrl,
      '--database_connection',
      other.databaseConnection,
    );
    expect(clash.code).toBe(3);
    expect((await getCellMapping(api.pool, cell.uuid))?.transportUrl).toBe(cell.transportUrl);
    expect((await run('cell_v2', 'update_cell', '--cell_uuid', randomUUID())).code).toBe(1);
  });

  it('delete_cell refuses a cell with hosts (2) or instances (3); --force unmaps its hosts', async () => {
    expect((await run('cell_v2', 'delete_cell', '--cell_uuid', other.uuid)).stderr).toBe(
      `There are existing hosts mapped to cell with uuid ${other.uuid}.\n`,
    );
    const instance = randomUUID();
    await createInstanceMapping(api.pool, { instanceUuid: instance, projectId: 'p', cellId: other.id });
    expect((await run('cell_v2', 'delete_cell', '--cell_uuid', other.uuid, '--force')).code).toBe(3);
    await deleteInstanceMapping(api.pool, instance);
    expect(await run('cell_v2', 'delete_cell', '--cell_uuid', other.uuid, '--force')).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await getCellMapping(api.pool, other.uuid)).toBeUndefined();
    expect(await getHostMapping(api.pool, 'o1')).toBeUndefined();
    expect((await listComputeNodes(otherDb.pool)).map((n) => n.mapped)).toEqual([0]);
    expect((await run('cell_v2', 'delete_cell', '--cell_uuid', other.uuid)).code).toBe(1);
  });
});
