import {
  createPool,
  createTestDatabase,
  isRetryableTxError,
  TransactionAbortedError,
  withTransaction,
  type TestDatabase,
} from '@cellsched/db';
import type { PoolClient } from 'pg';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'db_tx' });
  await db.pool.query(`
    CREATE TABLE counters (id int PRIMARY KEY, value int NOT NULL);
    CREATE SEQUENCE commit_failures;
    CREATE FUNCTION fail_first_commits() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- sequences are not transactional: the count survives the rollbacks it causes
      IF nextval('commit_failures') <= 2 THEN
        RAISE EXCEPTION 'forced serialization failure at commit' USING ERRCODE = '40001';
      END IF;
      RETURN NULL;
    END $$;
    CREATE TABLE commit_checked (id int PRIMARY KEY);
    CREATE CONSTRAINT TRIGGER fail_at_commit AFTER INSERT ON commit_checked
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_first_commits();`);
});
afterAll(async () => {
  await db.drop();
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE counters; INSERT INTO counters VALUES (1, 0), (2, 0)');
});

/** Resolves once `n` parties have arrived: makes two transactions overlap for sure. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return async () => {
    if (++arrived === n) open();
    await opened;
  };
}

const value = async (c: PoolClient | typeof db.pool, id: number): Promise<number> =>
  (await c.query<{ value: number }>('SELECT value FROM counters WHERE id = $1', [id])).rows[0]?.value ?? NaN;

describe('withTransaction', () => {
  test('retries a real serialization failure between two SERIALIZABLE read-modify-writes', async () => {
    const bothRead = barrier(2);
    const attempts: number[] = [];
    const retried: string[] = [];
    const increment = () =>
      withTransaction(
        db.pool,
        async (c, { attempt }) => {
          attempts.push(attempt);
          const v = await value(c, 1);
          if (attempt === 1) await bothRead();
          await c.query('UPDATE counters SET value = $1 WHERE id = 1', [v + 1]);
          return attempt;
        },
        { isolation: 'serializable', onRetry: ({ error }) => retried.push((error as { code: string }).code) },
      );
    const finalAttempts = await Promise.all([increment(), increment()]);
    expect(Math.max(...finalAttempts)).toBeGreaterThan(1);
    expect(attempts.length).toBeGreaterThan(2);
    expect(retried).toEqual(['40001']);
    expect(await value(db.pool, 1)).toBe(2); // no lost update
  });

  test('retries a real deadlock', async () => {
    const bothLocked = barrier(2);
    const retried: string[] = [];
    const lockBoth = (first: number, second: number) =>
      withTransaction(
        db.pool,
        async (c, { attempt }) => {
          await c.query('UPDATE counters SET value = value + 1 WHERE id = $1', [first]);
          if (attempt === 1) await bothLocked();
          await c.query('UPDATE counters SET value = value + 1 WHERE id = $1', [second]);
          return attempt;
        },
        { onRetry: ({ error }) => retried.push((error as { code: string }).code) },
      );
    const finalAttempts = await Promise.all([lockBoth(1, 2), lockBoth(2, 1)]);
    expect(retried).toEqual(['40P01']);
    expect(finalAttempts.sort()).toEqual([1, 2]);
    expect([await value(db.pool, 1), await value(db.pool, 2)]).toEqual([2, 2]);
  });

  test('retries a serialization failure raised by COMMIT itself', async () => {
    let calls = 0;
    await withTransaction(db.pool, async (c) => {
      calls++;
      await c.query('INSERT INTO commit_checked VALUES (1)');
    });
    expect(calls).toBe(3);
    expect((await db.pool.query('SELECT id FROM commit_checked')).rows).toEqual([{ id: 1 }]);
  });

  test('gives up after maxAttempts and rethrows the last 40001', async () => {
    let calls = 0;
    const err: unknown = await withTransaction(
      db.pool,
      async (c) => {
        calls++;
        await c.query("DO $$ BEGIN RAISE EXCEPTION 'always' USING ERRCODE = '40001'; END $$");
      },
      { maxAttempts: 3 },
    ).catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect(isRetryableTxError(err)).toBe(true);
  });

  test('does not retry other errors, and rolls back', async () => {
    let calls = 0;
    const err: unknown = await withTransaction(db.pool, async (c) => {
      calls++;
      await c.query('UPDATE counters SET value = 99 WHERE id = 2');
      await c.query('INSERT INTO counters VALUES (1, 0)');
    }).catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe('23505'); // unique_violation
    expect(calls).toBe(1);
    expect(await value(db.pool, 2)).toBe(0);
    const thrown = new Error('application error');
    await expect(
      withTransaction(db.pool, async () => {
        calls++;
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    expect(calls).toBe(2);
  });

  test('a read-only transaction refuses writes (25006, not retried)', async () => {
    const err: unknown = await withTransaction(db.pool, (c) => c.query('UPDATE counters SET value = 5'), {
      readOnly: true,
      isolation: 'repeatable read',
    }).catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe('25006');
  });

  test('a swallowed error cannot turn into a silent rollback', async () => {
    const err: unknown = await withTransaction(db.pool, async (c) => {
      await c.query('UPDATE counters SET value = 7 WHERE id = 1');
      await c.query('SELECT 1/0').catch(() => undefined);
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransactionAbortedError);
    expect(await value(db.pool, 1)).toBe(0);
  });

  test('clients are always released; a broken connection is destroyed, not reused', async () => {
    const pool = createPool({ url: db.url, max: 2 });
    try {
      for (let i = 0; i < 5; i++) await withTransaction(pool, () => Promise.reject(new Error('x'))).catch(() => undefined);
      const err: unknown = await withTransaction(pool, (c) => c.query('SELECT pg_terminate_backend(pg_backend_pid())')).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(pool.totalCount).toBeLessThanOrEqual(1);
      expect(await withTransaction(pool, async (c) => (await c.query<{ n: number }>('SELECT 1 AS n')).rows[0]?.n)).toBe(1);
      expect(pool.idleCount).toBe(pool.totalCount);
    } finally {
      await pool.end();
    }
  });

  test('bad options are refused before touching the pool', async () => {
    await expect(withTransaction(db.pool, async () => 1, { maxAttempts: 0 })).rejects.toThrow('maxAttempts');
    await expect(withTransaction(db.pool, async () => 1, { isolation: 'snapshot' as 'serializable' })).rejects.toThrow('unknown isolation');
    await expect(withTransaction(db.pool, async () => 1, { isolation: 'toString' as 'serializable' })).rejects.toThrow('unknown isolation');
  });
});
