// Restarts the shared PostgreSQL server: runs alone (jest.serial.config.js), and always
// leaves the server running (finally). The outage lasts a couple of seconds.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  atStartup,
  createPool,
  createTestDatabase,
  isConnectionError,
  runMigrations,
  withConnectionRetry,
  withTransaction,
  type TestDatabase,
} from '@cellsched/db';
import { join } from 'node:path';
import type { Pool } from 'pg';

const run = promisify(execFile);
const CLUSTER = ['--skip-systemctl-redirect', '15', 'main'];

async function ensureRunning(): Promise<void> {
  const status = await run('pg_ctlcluster', [...CLUSTER, 'status']).then(
    () => 0,
    (e: { code?: number }) => e.code ?? 1,
  );
  if (status !== 0) await run('pg_ctlcluster', [...CLUSTER, 'start']);
}

/** Queries every 50 ms until stopped; returns what each failed query threw. */
function probe(pool: Pool): { stop: () => Promise<unknown[]> } {
  const errors: unknown[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      await pool.query('SELECT 1').catch((e: unknown) => errors.push(e));
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return errors;
    },
  };
}

const describeError = (e: unknown): string => `${(e as { code?: string }).code ?? '-'} ${(e as Error).message}`;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'db_restart' });
});
afterAll(async () => {
  await db.drop();
});

test('a pool survives a PostgreSQL restart; callers retry connection errors meanwhile', async () => {
  const idleErrors: Error[] = [];
  const pool = createPool({ url: db.url, max: 3, connectionTimeoutMs: 5000, onIdleError: (e) => idleErrors.push(e) });
  try {
    const pidBefore = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    await Promise.all([1, 2, 3].map(() => pool.query('SELECT pg_sleep(0.05)'))); // fill the pool with idle clients
    const probing = probe(pool);
    try {
      await run('pg_ctlcluster', [...CLUSTER, 'restart']);
    } finally {
      await ensureRunning();
    }
    const seen = await probing.stop();
    const retried: string[] = [];
    const after = await withConnectionRetry(() => pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'), {
      timeoutMs: 30_000,
      onRetry: ({ error }) => retried.push(describeError(error)),
    });
    console.log(
      `during restart: ${seen.length} failed probes: ${[...new Set(seen.map(describeError))].join(' | ')}; ` +
        `idle errors: ${[...new Set(idleErrors.map(describeError))].join(' | ')}; retries after: ${retried.join(' | ') || 'none'}`,
    );
    expect(seen.every(isConnectionError)).toBe(true);
    expect(idleErrors.every(isConnectionError)).toBe(true);
    expect(idleErrors.length + seen.length).toBeGreaterThan(0); // the restart was noticed
    expect(after.rows[0]?.pid).not.toBe(pidBefore); // a new connection
    const n = await withTransaction(pool, async (c) => (await c.query<{ n: number }>('SELECT 41 + 1 AS n')).rows[0]?.n);
    expect(n).toBe(42);
  } finally {
    await pool.end();
  }
});

test('a service started while PostgreSQL is down runs its migrations once the server is back (atStartup)', async () => {
  const pool = createPool({ url: db.url, max: 2, connectionTimeoutMs: 2000 });
  const warnings: string[] = [];
  try {
    await run('pg_ctlcluster', [...CLUSTER, 'stop']);
    let applied: Promise<string[]>;
    try {
      applied = atStartup(
        'migrations',
        () => runMigrations(pool, { kind: 'cell', dir: join(__dirname, 'fixtures', 'basic') }),
        {
          warn: (_o, msg) => {
            warnings.push(msg);
          },
        },
        60_000,
      );
      await new Promise((r) => setTimeout(r, 3000)); // the server stays down for 3 s
    } finally {
      await ensureRunning();
    }
    const names = await applied;
    expect(names.length).toBeGreaterThan(0);
    expect(warnings.length).toBeGreaterThanOrEqual(2); // waited, and said so
    expect(warnings[0]).toBe('migrations: database unreachable, retrying');
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM schema_migrations');
    expect(Number(rows[0]?.n)).toBe(names.length);
  } finally {
    await ensureRunning();
    await pool.end();
  }
});

test('atStartup gives up at once on an error that is not about the connection', async () => {
  const warnings: string[] = [];
  await expect(
    atStartup('load', () => Promise.reject(new Error('relation "x" does not exist')), {
      warn: (_o, m) => {
        warnings.push(m);
      },
    }),
  ).rejects.toThrow('relation "x" does not exist');
  expect(warnings).toEqual([]);
});
