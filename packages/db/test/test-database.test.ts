import { createTestDatabase, dropStaleTestDatabases } from '@cellsched/db';
import { testInfra } from '@cellsched/config';
import { Client } from 'pg';
import { join } from 'node:path';

const admin = new Client({ connectionString: testInfra().pgAdminUrl });
beforeAll(() => admin.connect());
afterAll(() => admin.end());

const exists = async (name: string): Promise<boolean> =>
  (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;

describe('createTestDatabase', () => {
  test('creates a fresh migrated database with a pool, and drop() removes it (idempotently)', async () => {
    const db = await createTestDatabase({ kind: 'cell', migrationsDir: join(__dirname, 'fixtures/basic'), prefix: 'db_testdb' });
    expect(db.name).toMatch(/^cstest_db_testdb_\d{10}_[0-9a-f]{8}$/);
    expect(new URL(db.url).pathname).toBe(`/${db.name}`);
    expect(await exists(db.name)).toBe(true);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0]).toEqual({ n: 3 });
    await db.drop();
    await db.drop();
    expect(await exists(db.name)).toBe(false);
  });

  test('a failing migration drops the new database again', async () => {
    const before = (await admin.query("SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'cstest_db_badmig_%'")).rows[0];
    await expect(createTestDatabase({ kind: 'cell', migrationsDir: join(__dirname, 'nonexistent'), prefix: 'db_badmig' })).rejects.toThrow(
      'cannot read',
    );
    expect((await admin.query("SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'cstest_db_badmig_%'")).rows[0]).toEqual(
      before,
    );
  });

  test('bad options are refused', async () => {
    await expect(createTestDatabase({ prefix: 'Bad-Prefix' })).rejects.toThrow('prefix');
    await expect(createTestDatabase({ migrationsDir: '/tmp' })).rejects.toThrow('kind is required');
    await expect(createTestDatabase({ poolMax: 0 })).rejects.toThrow('poolMax');
  });
});

describe('dropStaleTestDatabases', () => {
  test('drops only test databases older than the cutoff', async () => {
    // NOTE: the 'old' database is 40 minutes old and the cutoff here is 20 minutes: the
    // default sweep (one hour) that other jest workers run as they create their databases
    // leaves it alone, so only this call can drop it.
    const now = Math.floor(Date.now() / 1000);
    const old = `cstest_db_stale_${now - 2400}_deadbeef`;
    const fresh = `cstest_db_stale_${now}_cafebabe`;
    const foreign = `db_stale_${now - 7200}_notours1`;
    for (const n of [old, fresh, foreign]) await admin.query(`CREATE DATABASE "${n}"`);
    try {
      const dropped = await dropStaleTestDatabases({ olderThanMs: 20 * 60_000 });
      expect(dropped).toContain(old);
      expect(dropped).not.toContain(fresh);
      expect([await exists(old), await exists(fresh), await exists(foreign)]).toEqual([false, true, true]);
    } finally {
      for (const n of [old, fresh, foreign]) await admin.query(`DROP DATABASE IF EXISTS "${n}" WITH (FORCE)`);
    }
  });
});
