import { appendFileSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, createTestDatabase, MigrationError, runMigrations, type TestDatabase } from '@cellsched/db';
import type { Pool } from 'pg';

const FIXTURES = join(__dirname, 'fixtures/basic');
const ALL = ['001_initial', '002_gadgets', '003_widget_colour'];
let tmp: string;
const dbs: TestDatabase[] = [];

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'cellsched-migrations-'));
});
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.drop()));
  rmSync(tmp, { recursive: true, force: true });
});

async function freshDb(): Promise<TestDatabase> {
  const db = await createTestDatabase({ prefix: 'db_migrations' });
  dbs.push(db);
  return db;
}

/** A migrations directory holding the first `n` fixture files. */
function dirWith(label: string, n: number): string {
  const dir = mkdtempSync(join(tmp, `${label}-`));
  for (const name of ALL.slice(0, n)) copyFileSync(join(FIXTURES, `${name}.sql`), join(dir, `${name}.sql`));
  return dir;
}

async function tables(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
  return rows.map((r) => r.t);
}

async function recorded(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ r: string }>(
    "SELECT kind || ':' || version || ':' || name AS r FROM schema_migrations ORDER BY kind, version",
  );
  return rows.map((r) => r.r);
}

async function expectCode(p: Promise<unknown>, code: string, text: string | RegExp): Promise<void> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MigrationError);
  expect((err as MigrationError).code).toBe(code);
  expect((err as Error).message).toMatch(text);
}

describe('runMigrations', () => {
  test('applies every file from empty, in order, and a second run applies nothing', async () => {
    const { pool } = await freshDb();
    expect(await runMigrations(pool, { kind: 'placement', dir: FIXTURES })).toEqual(ALL);
    expect(await tables(pool)).toEqual(['gadgets', 'schema_migrations', 'widgets']);
    expect(await recorded(pool)).toEqual(['placement:1:001_initial', 'placement:2:002_gadgets', 'placement:3:003_widget_colour']);
    const { rows } = await pool.query<{ checksum: string }>('SELECT checksum FROM schema_migrations');
    rows.forEach((r) => expect(r.checksum).toMatch(/^[0-9a-f]{64}$/));
    expect(await runMigrations(pool, { kind: 'placement', dir: FIXTURES })).toEqual([]);
    expect(await recorded(pool)).toHaveLength(3);
  });

  test('only the new files are applied when the directory grows', async () => {
    const { pool } = await freshDb();
    const dir = dirWith('grow', 1);
    expect(await runMigrations(pool, { kind: 'cell', dir })).toEqual(['001_initial']);
    copyFileSync(join(FIXTURES, '002_gadgets.sql'), join(dir, '002_gadgets.sql'));
    expect(await runMigrations(pool, { kind: 'cell', dir })).toEqual(['002_gadgets']);
  });

  test('concurrent runners from two pools apply each file exactly once', async () => {
    const db = await freshDb();
    const other = createPool({ url: db.url, max: 2 });
    try {
      const results = await Promise.all([
        runMigrations(db.pool, { kind: 'api', dir: FIXTURES }),
        runMigrations(other, { kind: 'api', dir: FIXTURES }),
      ]);
      expect(results.flat().sort()).toEqual(ALL);
      expect(results.map((r) => r.length).sort()).toEqual([0, 3]);
      expect(await recorded(db.pool)).toHaveLength(3);
    } finally {
      await other.end();
    }
  });

  test('an edited applied file is refused before anything else is applied', async () => {
    const { pool } = await freshDb();
    const dir = dirWith('edited', 2);
    await runMigrations(pool, { kind: 'placement', dir });
    appendFileSync(join(dir, '001_initial.sql'), '\n-- edited\n');
    copyFileSync(join(FIXTURES, '003_widget_colour.sql'), join(dir, '003_widget_colour.sql'));
    await expectCode(runMigrations(pool, { kind: 'placement', dir }), 'db.migration.checksum_mismatch', /001_initial/);
    expect(await recorded(pool)).toHaveLength(2);
  });

  test('a database newer than the files is refused', async () => {
    const { pool } = await freshDb();
    await runMigrations(pool, { kind: 'placement', dir: FIXTURES });
    await expectCode(
      runMigrations(pool, { kind: 'placement', dir: dirWith('older', 2) }),
      'db.migration.newer_than_code',
      /003_widget_colour/,
    );
  });

  test("another service's database is refused", async () => {
    const { pool } = await freshDb();
    await runMigrations(pool, { kind: 'placement', dir: dirWith('kind', 1) });
    await expectCode(runMigrations(pool, { kind: 'api', dir: FIXTURES }), 'db.migration.kind_mismatch', /holds the placement schema/);
    expect(await tables(pool)).toEqual(['schema_migrations', 'widgets']);
  });

  test('a failing file is rolled back entirely; earlier files stay applied', async () => {
    const { pool } = await freshDb();
    const dir = dirWith('failing', 1);
    writeFileSync(join(dir, '002_broken.sql'), 'CREATE TABLE half_done (id int);\n\nCREATE TABLE oops (id nonexistent_type);\n');
    await expectCode(
      runMigrations(pool, { kind: 'cell', dir }),
      'db.migration.failed',
      /002_broken failed at line 3: type "nonexistent_type" does not exist/,
    );
    expect(await tables(pool)).toEqual(['schema_migrations', 'widgets']);
    expect(await recorded(pool)).toEqual(['cell:1:001_initial']);
  });

  test('waits for the advisory lock, and gives up with a clear error after lockTimeoutMs', async () => {
    const db = await freshDb();
    const holder = await db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(1667591276, 1)'); // the runner's documented lock key
      await expectCode(
        runMigrations(db.pool, { kind: 'cell', dir: FIXTURES, lockTimeoutMs: 200 }),
        'db.migration.lock_timeout',
        /migration lock/,
      );
      const waiting = runMigrations(db.pool, { kind: 'cell', dir: FIXTURES });
      await new Promise((r) => setTimeout(r, 300));
      expect(await tables(db.pool)).toEqual([]); // still waiting: nothing done yet
      await holder.query('SELECT pg_advisory_unlock(1667591276, 1)');
      expect(await waiting).toEqual(ALL);
    } finally {
      holder.release(true);
    }
  });

  test('bad directories are refused without touching the database', async () => {
    const { pool } = await freshDb();
    const gap = dirWith('gap', 1);
    copyFileSync(join(FIXTURES, '003_widget_colour.sql'), join(gap, '003_widget_colour.sql'));
    await expectCode(
      runMigrations(pool, { kind: 'cell', dir: gap }),
      'db.migration.bad_files',
      /expected migration number 2, found 003_widget_colour/,
    );
    const badName = dirWith('badname', 1);
    writeFileSync(join(badName, '2-Add-Thing.sql'), 'SELECT 1;');
    await expectCode(runMigrations(pool, { kind: 'cell', dir: badName }), 'db.migration.bad_files', /2-Add-Thing\.sql/);
    await expectCode(runMigrations(pool, { kind: 'cell', dir: join(tmp, 'nope') }), 'db.migration.bad_files', /cannot read/);
    await expect(runMigrations(pool, { kind: 'nova' as 'cell', dir: FIXTURES })).rejects.toThrow('kind must be one of');
    expect(await tables(pool)).toEqual([]);
  });
});
