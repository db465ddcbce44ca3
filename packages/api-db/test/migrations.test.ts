import { createTestDatabase, runMigrations, type TestDatabase } from '@cellsched/db';
import { API_DB_MIGRATIONS_DIR, getFlavorByFlavorId, getImage, listFlavors, syncApiDb } from '@cellsched/api-db';
import { CELL_DB_MIGRATIONS_DIR } from '@cellsched/cell-db';

const TABLES = [
  'aggregate_hosts',
  'aggregate_metadata',
  'aggregates',
  'build_requests',
  'cell_mapping_endpoints',
  'cell_mappings',
  'flavor_extra_specs',
  'flavor_projects',
  'flavors',
  'host_mappings',
  'images',
  'instance_group_member',
  'instance_group_policy',
  'instance_groups',
  'instance_mappings',
  'request_specs',
  'schema_migrations',
  'server_task_intents',
];

describe('API database migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'apidb_mig' });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('apply from empty, create every table and are idempotent', async () => {
    expect(await syncApiDb(db.pool)).toEqual([
      '001_initial',
      '002_build_request_trace',
      '003_cell_mapping_endpoints',
      '004_server_task_intents',
      '005_catalogue_notify',
    ]);
    expect(await syncApiDb(db.pool)).toEqual([]);
    const r = await db.pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(r.rows.map((t) => t.table_name)).toEqual(TABLES);
  });

  it("seeds Nova's default flavors m1.tiny..m1.xlarge with ids 1-5", async () => {
    const flavors = await listFlavors(db.pool);
    expect(flavors.map((f) => [f.id, f.flavorid, f.name, f.vcpus, f.memoryMb, f.rootGb])).toEqual([
      [1, '1', 'm1.tiny', 1, 512, 1],
      [2, '2', 'm1.small', 1, 2048, 20],
      [3, '3', 'm1.medium', 2, 4096, 40],
      [4, '4', 'm1.large', 4, 8192, 80],
      [5, '5', 'm1.xlarge', 8, 16384, 160],
    ]);
    // The serial sequence continues after the seeded ids.
    const next = await db.pool.query<{ id: number }>(
      "INSERT INTO flavors (name, memory_mb, vcpus, flavorid) VALUES ('x', 1, 1, 'x') RETURNING id",
    );
    expect(next.rows[0]?.id).toBe(6);
    expect((await getFlavorByFlavorId(db.pool, '1'))?.name).toBe('m1.tiny');
  });

  it("seeds Nova's fake Glance image 155d900f-…", async () => {
    const image = await getImage(db.pool, '155d900f-4e14-4e4c-a73d-069cbf4541e6');
    expect(image).toMatchObject({ name: 'fakeimage123456', diskFormat: 'raw', size: 25165824, properties: { architecture: 'x86_64' } });
  });

  it('refuses to run the cell migrations on the API database', async () => {
    await expect(runMigrations(db.pool, { kind: 'cell', dir: CELL_DB_MIGRATIONS_DIR })).rejects.toMatchObject({
      code: 'db.migration.kind_mismatch',
    });
  });

  it('the migrations directory is the package one', () => {
    expect(API_DB_MIGRATIONS_DIR).toMatch(/packages\/api-db\/migrations$/);
  });
});
