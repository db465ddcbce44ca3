import { randomUUID } from 'node:crypto';
import { CELL0_UUID } from '@cellsched/config';
import { CELL_DB_MIGRATIONS_DIR, listComputeNodes, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { API_DB_MIGRATIONS_DIR, createCellMapping, discoverHosts, listHostMappings, type CellMapping } from '@cellsched/api-db';

let api: TestDatabase;
let cellA: TestDatabase;
let cellB: TestDatabase;
const pools = new Map<string, TestDatabase>();
const cellDb = (cell: CellMapping) => {
  const db = pools.get(cell.databaseConnection);
  if (db === undefined) throw new Error(`no test database for ${cell.name ?? cell.uuid}`);
  return db.pool;
};

beforeAll(async () => {
  [api, cellA, cellB] = await Promise.all([
    createTestDatabase({ prefix: 'disc_api', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR }),
    createTestDatabase({ prefix: 'disc_a', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR }),
    createTestDatabase({ prefix: 'disc_b', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR }),
  ]);
  pools.set(cellA.url, cellA).set(cellB.url, cellB);
  await createCellMapping(api.pool, {
    uuid: CELL0_UUID,
    name: 'cell0',
    transportUrl: 'none:///',
    databaseConnection: 'postgres://unused/cell0',
  });
  await createCellMapping(api.pool, { name: 'a', transportUrl: 'amqp://x/a', databaseConnection: cellA.url });
  await createCellMapping(api.pool, { name: 'b', transportUrl: 'amqp://x/b', databaseConnection: cellB.url });
});
afterAll(async () => {
  await Promise.all([api.drop(), cellA.drop(), cellB.drop()]);
});

async function addComputes(db: TestDatabase, prefix: string, n: number): Promise<string[]> {
  const hosts = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  for (const host of hosts) {
    const { service } = await upsertService(db.pool, { host, binary: 'nova-compute' });
    await upsertComputeNode(db.pool, {
      uuid: randomUUID(),
      serviceId: service.id,
      host,
      hypervisorHostname: host,
      vcpus: 4,
      memoryMb: 4096,
      localGb: 40,
    });
  }
  return hosts;
}

describe('discoverHosts (library)', () => {
  it('two concurrent runs map every host exactly once, into its own cell; cell0 is skipped', async () => {
    const a = await addComputes(cellA, 'a', 20);
    const b = await addComputes(cellB, 'b', 20);
    const messages: string[] = [];
    const [r1, r2] = await Promise.all([
      discoverHosts(api.pool, { cellDb, status: (m) => messages.push(m) }),
      discoverHosts(api.pool, { cellDb }),
    ]);
    const all = [...(r1 ?? []), ...(r2 ?? [])];
    expect(all.sort()).toEqual([...a, ...b].sort());
    const mappings = await listHostMappings(api.pool);
    expect(mappings).toHaveLength(40);
    expect(mappings.every((m) => m.host.startsWith(m.cellName ?? '?'))).toBe(true);
    expect(messages).toContain('Skipping cell0 since it does not contain hosts.');
    expect((await listComputeNodes(cellA.pool)).every((n) => n.mapped === 1)).toBe(true);
    expect(await discoverHosts(api.pool, { cellDb })).toEqual([]);
    expect(await discoverHosts(api.pool, { cellDb, cellUuid: randomUUID() })).toBeUndefined();
  });

  it('a host already mapped to another cell is not moved, but its node is marked mapped', async () => {
    await addComputes(cellB, 'a', 1); // host "a0" also appears in cell b
    expect(await discoverHosts(api.pool, { cellDb })).toEqual([]);
    expect((await listHostMappings(api.pool)).find((m) => m.host === 'a0')?.cellName).toBe('a');
    expect((await listComputeNodes(cellB.pool, { host: 'a0' })).map((n) => n.mapped)).toEqual([1]);
  });
});
