import { createTestDatabase, runMigrations, type TestDatabase } from '@cellsched/db';
import { API_DB_MIGRATIONS_DIR } from '@cellsched/api-db';
import { recordServiceHeartbeats, syncCellDb, updateComputeNodesStats } from '@cellsched/cell-db';

const TABLES = [
  'compute_nodes',
  'compute_processes',
  'instance_actions',
  'instance_actions_events',
  'instance_faults',
  'instance_tasks',
  'instances',
  'migrations',
  'schema_migrations',
  'services',
];

describe('cell database migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'celldb_mig' });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('apply from empty, create every table and are idempotent', async () => {
    expect(await syncCellDb(db.pool)).toEqual([
      '001_initial',
      '002_instances_created_at_uuid_idx',
      '003_instances_trace_parent',
      '004_retired_hosts',
      '005_instances_created_at_ms',
      '006_instance_moves',
      '007_migration_instance_types',
      '008_migrations_created_at_ms',
      '009_services_heartbeat_hot',
      '010_compute_nodes_cpu_info',
      '011_compute_nodes_stats_hot',
    ]);
    expect(await syncCellDb(db.pool)).toEqual([]);
    const r = await db.pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(r.rows.map((t) => t.table_name)).toEqual(TABLES);
  });

  it('refuses to run the API migrations on a cell database', async () => {
    await expect(runMigrations(db.pool, { kind: 'api', dir: API_DB_MIGRATIONS_DIR })).rejects.toMatchObject({
      code: 'db.migration.kind_mismatch',
    });
  });

  it('indexes no column that a heartbeat or a stats report changes', async () => {
    const r = await db.pool.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%updated_at%' ORDER BY 1");
    expect(r.rows.map((i) => i.indexname)).toEqual([]);
  });

  it('updates compute nodes in place on a stats report (heap-only tuples: no index entry written)', async () => {
    await db.pool.query(`INSERT INTO compute_nodes (uuid, host, hypervisor_hostname, vcpus, memory_mb, local_gb)
      SELECT gen_random_uuid(), 'hot-node-' || g, 'hot-node-' || g, 8, 16384, 100 FROM generate_series(1, 200) g`);
    const { rows } = await db.pool.query<{ uuid: string }>("SELECT uuid FROM compute_nodes WHERE host LIKE 'hot-node-%'");
    const c = await db.pool.connect();
    try {
      await c.query('BEGIN');
      expect(
        await updateComputeNodesStats(
          c,
          rows.map((r) => ({ uuid: r.uuid, stats: { num_instances: '1', io_workload: '1' }, runningVms: 1 })),
        ),
      ).toBe(200);
      const s = await c.query<{ upd: number; hot: number }>(
        "SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables WHERE relname = 'compute_nodes'",
      );
      // NOTE: most, not all: rows just inserted in one transaction fill their pages to the fillfactor, and a
      // page whose new versions do not fit moves some rows (with an index entry). With updated_at indexed: none.
      expect(s.rows[0]?.upd).toBe(200);
      expect(s.rows[0]?.hot).toBeGreaterThanOrEqual(150);
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  });

  it('updates services in place on a heartbeat (heap-only tuples: no index entry written)', async () => {
    await db.pool.query(
      `INSERT INTO services (uuid, host, "binary", topic, last_seen_up) SELECT gen_random_uuid(), 'hot-' || g, 'nova-compute', 'compute', now() FROM generate_series(1, 200) g`,
    );
    const hosts = Array.from({ length: 200 }, (_, i) => `hot-${i + 1}`);
    // NOTE: pg_stat_xact_user_tables counts the open transaction's own updates
    const c = await db.pool.connect();
    try {
      await c.query('BEGIN');
      expect(await recordServiceHeartbeats(c, hosts, 'nova-compute')).toEqual([]);
      const s = await c.query<{ upd: string; hot: string }>(
        "SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_xact_user_tables WHERE relname = 'services'",
      );
      expect(s.rows[0]).toEqual({ upd: '200', hot: '200' });
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  });
});
