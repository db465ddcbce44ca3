import { createPool, createTestDatabase, isConnectionError, preparedName, type TestDatabase } from '@cellsched/db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'db_pool' });
});
afterAll(async () => {
  await db.drop();
});

describe('createPool', () => {
  test('sends statements with parameters as named prepared statements (once per connection), others as they are; prepare: false sends none', async () => {
    const text = 'SELECT $1::int + 1 AS n';
    const prepared = async (pool: ReturnType<typeof createPool>): Promise<string[]> => {
      const client = await pool.connect();
      try {
        expect((await client.query<{ n: number }>(text, [1])).rows[0]?.n).toBe(2);
        expect((await client.query<{ n: number }>(text, [41])).rows[0]?.n).toBe(42);
        expect((await client.query<{ n: number }>('SELECT 7 AS n')).rows[0]?.n).toBe(7);
        // planned per call: a generic plan would ignore the values (a sequential scan for `$1 IS NULL OR col = $1`)
        expect((await client.query<{ mode: string }>("SELECT current_setting('plan_cache_mode') AS mode")).rows[0]?.mode).toBe(
          pool === on ? 'force_custom_plan' : 'auto',
        );
        return (await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'cs\\_%'")).rows.map(
          (r) => r.name,
        );
      } finally {
        client.release();
      }
    };
    const on = createPool({ url: db.url, max: 1 });
    const off = createPool({ url: db.url, max: 1, prepare: false });
    try {
      const name = preparedName(text);
      expect(name).toMatch(/^cs_[0-9a-f]{24}$/);
      expect(preparedName(text)).toBe(name);
      expect(preparedName(`${text} `)).not.toBe(name);
      expect(await prepared(on)).toEqual([name]);
      expect(await prepared(off)).toEqual([]);
      await expect(on.query('SELECT $1::int / 0', [1])).rejects.toMatchObject({ code: '22012' });
      expect((await on.query<{ n: number }>(text, [2])).rows[0]?.n).toBe(3);
    } finally {
      await Promise.all([on.end(), off.end()]);
    }
  });

  test('sets application_name and statement_timeout on every connection', async () => {
    const pool = createPool({ url: db.url, max: 2, applicationName: 'cellsched-pool-test', statementTimeoutMs: 100 });
    try {
      const { rows } = await pool.query<{ app: string; timeout: string }>(
        "SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS timeout",
      );
      expect(rows[0]).toEqual({ app: 'cellsched-pool-test', timeout: '100ms' });
      await expect(pool.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' }); // query_canceled
    } finally {
      await pool.end();
    }
  });

  test('an idle connection killed by the server is reported, not thrown, and replaced', async () => {
    const idleErrors: Error[] = [];
    const pool = createPool({ url: db.url, max: 1, applicationName: 'cellsched-idle-test', onIdleError: (e) => idleErrors.push(e) });
    try {
      const pid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      for (let i = 0; i < 50 && idleErrors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(idleErrors).toHaveLength(1);
      expect(isConnectionError(idleErrors[0])).toBe(true);
      const next = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      expect(next).not.toBe(pid);
    } finally {
      await pool.end();
    }
  });

  test('a checked-out connection killed between statements does not crash the process; its next statement fails, the pool recovers', async () => {
    const idleErrors: Error[] = [];
    const pool = createPool({ url: db.url, max: 1, applicationName: 'cellsched-held-test', onIdleError: (e) => idleErrors.push(e) });
    try {
      const client = await pool.connect();
      await client.query('BEGIN');
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      // no statement in flight: the FATAL arrives as the client's 'error' event (uncaught before the fix)
      for (let i = 0; i < 50 && (client as unknown as { _queryable: boolean })._queryable; i++) await new Promise((r) => setTimeout(r, 20));
      const failed = await client.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isConnectionError(failed)).toBe(true);
      client.release();
      expect(idleErrors).toHaveLength(0);
      const next = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      expect(next).not.toBe(pid);
    } finally {
      await pool.end();
    }
  });

  test('bad options are refused', () => {
    expect(() => createPool({ url: 'nope' })).toThrow('url');
    expect(() => createPool({ url: db.url, max: 0 })).toThrow('max must be a positive integer');
    expect(() => createPool({ url: db.url, statementTimeoutMs: -1 })).toThrow('statementTimeoutMs');
  });
});
