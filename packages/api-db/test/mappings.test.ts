import { randomUUID } from 'node:crypto';
import { CELL0_UUID } from '@cellsched/config';
import { createTestDatabase, withTransaction, type TestDatabase } from '@cellsched/db';
import {
  addHostMappings,
  API_DB_MIGRATIONS_DIR,
  countInstanceMappingsInCell,
  createCellMapping,
  deleteCellMapping,
  updateCellMapping,
  createInstanceMapping,
  deleteHostMapping,
  deleteInstanceMapping,
  findCellMappingByUrls,
  getCellMapping,
  getHostMapping,
  getInstanceMapping,
  getInstanceMappings,
  listCellMappings,
  listHostMappings,
  listCellMappingEndpoints,
  listInstanceMappings,
  setCellMappingDisabled,
  setInstanceMappingCell,
  setInstanceMappingQueuedForDelete,
} from '@cellsched/api-db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'apidb_map', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

const cellInput = (name: string) => ({
  name,
  transportUrl: `amqp://u:p@127.0.0.1:5672/${name}`,
  databaseConnection: `postgres://u:p@127.0.0.1/${name}`,
});

describe('cell mappings', () => {
  it('creates, is idempotent per uuid, lists cell0 first then by name', async () => {
    const uuid = randomUUID();
    const first = await createCellMapping(db.pool, { uuid, ...cellInput('zeta') });
    expect(first.created).toBe(true);
    expect(first.cell).toMatchObject({ uuid, name: 'zeta', disabled: false });
    const again = await createCellMapping(db.pool, { uuid, ...cellInput('renamed') });
    expect(again).toEqual({ cell: first.cell, created: false });
    await createCellMapping(db.pool, {
      uuid: CELL0_UUID,
      name: 'cell0',
      transportUrl: 'none:///',
      databaseConnection: 'postgres://u:p@127.0.0.1/cell0',
    });
    await createCellMapping(db.pool, cellInput('alpha'));
    expect((await listCellMappings(db.pool)).map((c) => c.name)).toEqual(['cell0', 'alpha', 'zeta']);
    expect((await getCellMapping(db.pool, uuid))?.name).toBe('zeta');
    expect(await getCellMapping(db.pool, randomUUID())).toBeUndefined();
    expect((await findCellMappingByUrls(db.pool, cellInput('alpha').transportUrl, cellInput('alpha').databaseConnection))?.name).toBe(
      'alpha',
    );
    expect(await findCellMappingByUrls(db.pool, 'amqp://x/', 'postgres://y/')).toBeUndefined();
  });

  it('disables and enables', async () => {
    const { cell } = await createCellMapping(db.pool, cellInput('toggle'));
    expect(await setCellMappingDisabled(db.pool, cell.uuid, true)).toBe(true);
    expect((await getCellMapping(db.pool, cell.uuid))?.disabled).toBe(true);
    expect(await setCellMappingDisabled(db.pool, randomUUID(), true)).toBe(false);
  });

  it('cell_mapping_endpoints shows every mapping with no user or password in either URL', async () => {
    const { cell } = await createCellMapping(db.pool, {
      name: 'creds',
      transportUrl: 'amqps://us%40er:p@ss:w0rd@mq.example:5671/vh?heartbeat=5',
      databaseConnection: 'postgresql://owner:s3cret@db.example:6432/creds?sslmode=require',
    });
    const all = await listCellMappingEndpoints(db.pool);
    expect(all.map((c) => c.uuid)).toEqual((await listCellMappings(db.pool)).map((c) => c.uuid));
    expect(all.find((c) => c.uuid === cell.uuid)).toEqual({
      ...cell,
      transportUrl: 'amqps://mq.example:5671/vh?heartbeat=5',
      databaseConnection: 'postgresql://db.example:6432/creds?sslmode=require',
    });
    expect(all.find((c) => c.uuid === CELL0_UUID)?.transportUrl).toBe('none:///');
    expect(all.some((c) => `${c.transportUrl} ${c.databaseConnection}`.includes('@'))).toBe(false);
  });

  it('refuses bad input and writes nothing', async () => {
    const before = (await listCellMappings(db.pool)).length;
    await expect(createCellMapping(db.pool, { ...cellInput('bad'), uuid: 'not-a-uuid' })).rejects.toMatchObject({
      code: 'api_db.invalid_uuid',
    });
    await expect(createCellMapping(db.pool, { ...cellInput('bad'), transportUrl: '' })).rejects.toMatchObject({
      code: 'api_db.cell_mapping.invalid',
    });
    expect((await listCellMappings(db.pool)).length).toBe(before);
  });
});

describe('cell mapping update and delete', () => {
  it('updates only the given fields; delete refuses a referenced cell and is idempotent', async () => {
    const { cell } = await createCellMapping(db.pool, cellInput('upd'));
    expect(await updateCellMapping(db.pool, cell.uuid, { name: 'upd2', disabled: true })).toEqual({
      ...cell,
      name: 'upd2',
      disabled: true,
    });
    expect(await updateCellMapping(db.pool, cell.uuid, { name: null })).toMatchObject({
      name: null,
      disabled: true,
      transportUrl: cell.transportUrl,
    });
    expect(await updateCellMapping(db.pool, randomUUID(), { disabled: false })).toBeUndefined();
    await expect(updateCellMapping(db.pool, cell.uuid, { transportUrl: '' })).rejects.toMatchObject({
      code: 'api_db.cell_mapping.invalid',
    });
    const instance = randomUUID();
    await createInstanceMapping(db.pool, { instanceUuid: instance, projectId: 'p', cellId: cell.id });
    expect(await countInstanceMappingsInCell(db.pool, cell.id)).toBe(1);
    await expect(deleteCellMapping(db.pool, cell.uuid)).rejects.toMatchObject({ code: '23503' });
    await deleteInstanceMapping(db.pool, instance);
    expect(await countInstanceMappingsInCell(db.pool, cell.id)).toBe(0);
    expect(await deleteCellMapping(db.pool, cell.uuid)).toBe(true);
    expect(await deleteCellMapping(db.pool, cell.uuid)).toBe(false);
  });
});

describe('host mappings', () => {
  it('maps only new hosts, never moves a mapped host', async () => {
    const { cell: a } = await createCellMapping(db.pool, cellInput('hm_a'));
    const { cell: b } = await createCellMapping(db.pool, cellInput('hm_b'));
    expect(await addHostMappings(db.pool, a.id, ['h2', 'h1', 'h2'])).toEqual(['h2', 'h1']);
    expect(await addHostMappings(db.pool, b.id, ['h1', 'h3'])).toEqual(['h3']);
    expect(await getHostMapping(db.pool, 'h1')).toEqual({ host: 'h1', cellId: a.id, cellUuid: a.uuid, cellName: 'hm_a' });
    expect((await listHostMappings(db.pool, { cellUuid: a.uuid })).map((h) => h.host)).toEqual(['h1', 'h2']);
    expect(await addHostMappings(db.pool, a.id, [])).toEqual([]);
    expect(await deleteHostMapping(db.pool, 'h3')).toBe(true);
    expect(await deleteHostMapping(db.pool, 'h3')).toBe(false);
    expect(await getHostMapping(db.pool, 'h3')).toBeUndefined();
  });
});

describe('instance mappings', () => {
  it('are created without a cell, idempotently, then pointed at a cell', async () => {
    const { cell } = await createCellMapping(db.pool, cellInput('im'));
    const uuid = randomUUID();
    expect(await createInstanceMapping(db.pool, { instanceUuid: uuid, projectId: 'p1', userId: 'u1' })).toBe(true);
    expect(await createInstanceMapping(db.pool, { instanceUuid: uuid, projectId: 'other' })).toBe(false);
    expect(await getInstanceMapping(db.pool, uuid)).toMatchObject({
      instanceUuid: uuid,
      projectId: 'p1',
      userId: 'u1',
      cell: undefined,
      queuedForDelete: false,
    });
    expect(await setInstanceMappingCell(db.pool, uuid, cell.id)).toBe(true);
    expect(await setInstanceMappingCell(db.pool, uuid, cell.id)).toBe(true);
    expect((await getInstanceMapping(db.pool, uuid))?.cell).toEqual(cell);
    expect(await setInstanceMappingQueuedForDelete(db.pool, uuid, true)).toBe(true);
    expect(await listInstanceMappings(db.pool, { projectId: 'p1' })).toEqual([]);
    expect((await listInstanceMappings(db.pool, { projectId: 'p1', includeQueuedForDelete: true })).map((m) => m.instanceUuid)).toEqual([
      uuid,
    ]);
    expect((await getInstanceMappings(db.pool, [uuid, randomUUID()])).map((m) => m.instanceUuid)).toEqual([uuid]);
    expect(await deleteInstanceMapping(db.pool, uuid)).toBe(true);
    expect(await deleteInstanceMapping(db.pool, uuid)).toBe(false);
    expect(await setInstanceMappingCell(db.pool, uuid, cell.id)).toBe(false);
  });

  it('compose in a transaction: a failure rolls every write back', async () => {
    const uuid = randomUUID();
    await expect(
      withTransaction(db.pool, async (c) => {
        await createInstanceMapping(c, { instanceUuid: uuid, projectId: 'p' });
        await createInstanceMapping(c, { instanceUuid: 'bad', projectId: 'p' });
      }),
    ).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
    expect(await getInstanceMapping(db.pool, uuid)).toBeUndefined();
  });

  it('refuse bad input', async () => {
    await expect(createInstanceMapping(db.pool, { instanceUuid: randomUUID(), projectId: '' })).rejects.toMatchObject({
      code: 'api_db.instance_mapping.invalid',
    });
    await expect(getInstanceMapping(db.pool, 'x')).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
  });
});
