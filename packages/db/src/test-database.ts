import { randomBytes } from 'node:crypto';
import { testInfra } from '@cellsched/config';
import { Client, type Pool } from 'pg';
import { runMigrations, type DbKind } from './migrations';
import { createPool } from './pool';

/** A throwaway database for one test file. */
export interface TestDatabase {
  /** URL of the new database (same credentials as the admin URL). */
  url: string;
  name: string;
  pool: Pool;
  /** Closes the pool and drops the database WITH (FORCE). Idempotent. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Required with `migrationsDir`. */
  kind?: DbKind;
  /** Run these migrations on the new database. */
  migrationsDir?: string;
  /** Readable part of the name, e.g. `placement` (lowercase letters, digits, `_`). */
  prefix?: string;
  /** Size of the returned pool (default 10). */
  poolMax?: number;
  /** Admin URL; default `testInfra().pgAdminUrl` (env `CELLSCHED_TEST_PG_URL`). */
  adminUrl?: string;
}

// NOTE: the creation time is part of the name (PostgreSQL does not record it), so leftovers
// of crashed runs can be found and dropped safely: only names matching this are touched.
const NAME = /^cstest_(?:[a-z0-9_]+_)?(\d{10})_[a-z0-9]{8}$/;
const HOUR_MS = 3_600_000;
let sweptStale = false;

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(adminUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl, application_name: 'cellsched-test-admin' });
  client.on('error', () => undefined); // a dying admin session must not crash the test run
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Drops test databases created by `createTestDatabase` more than `olderThanMs` ago
 * (default one hour): leftovers of crashed or interrupted runs. Only names of the
 * form `cstest_[prefix_]<epoch seconds>_<random>` are considered. Returns the names dropped.
 */
export async function dropStaleTestDatabases(opts: { adminUrl?: string; olderThanMs?: number } = {}): Promise<string[]> {
  const cutoff = Date.now() - (opts.olderThanMs ?? HOUR_MS);
  return withAdmin(opts.adminUrl ?? testInfra().pgAdminUrl, async (admin) => {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'cstest\\_%'");
    const stale = rows.map((r) => r.datname).filter((n) => Number(NAME.exec(n)?.[1] ?? Infinity) * 1000 < cutoff);
    const dropped: string[] = [];
    for (const name of stale) {
      // NOTE: another process may be sweeping the same leftovers; IF EXISTS keeps that harmless.
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      dropped.push(name);
    }
    return dropped;
  });
}

function newName(prefix: string | undefined): string {
  if (prefix !== undefined && !/^[a-z0-9_]{1,30}$/.test(prefix)) {
    throw new TypeError(`createTestDatabase: prefix must be 1-30 of [a-z0-9_], got ${JSON.stringify(prefix)}`);
  }
  const rand = randomBytes(8).toString('hex').slice(0, 8);
  return ['cstest', prefix, Math.floor(Date.now() / 1000), rand].filter((p) => p !== undefined).join('_');
}

/**
 * Creates a uniquely named database on the test server, optionally migrates it, and
 * returns it with a pool. Also sweeps stale test databases once per process (errors
 * of the sweep are ignored). Throws if the server is unreachable or a migration fails;
 * in the latter case the new database is dropped again.
 */
export async function createTestDatabase(opts: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (opts.migrationsDir !== undefined && opts.kind === undefined)
    throw new TypeError('createTestDatabase: kind is required with migrationsDir');
  if (opts.poolMax !== undefined && (!Number.isSafeInteger(opts.poolMax) || opts.poolMax < 1))
    throw new TypeError('createTestDatabase: poolMax must be a positive integer');
  const name = newName(opts.prefix);
  const adminUrl = opts.adminUrl ?? testInfra().pgAdminUrl;
  if (!sweptStale) {
    sweptStale = true;
    await dropStaleTestDatabases({ adminUrl }).catch(() => undefined);
  }
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${quoteIdent(name)}`));
  const url = databaseUrl(adminUrl, name);
  const pool = createPool({ url, max: opts.poolMax ?? 10, applicationName: `test-${opts.prefix ?? 'db'}`, onIdleError: () => undefined });
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    await pool.end().catch(() => undefined);
    await withAdmin(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  };
  if (opts.migrationsDir !== undefined && opts.kind !== undefined) {
    try {
      await runMigrations(pool, { kind: opts.kind, dir: opts.migrationsDir });
    } catch (err) {
      await drop().catch(() => undefined);
      throw err;
    }
  }
  return { url, name, pool, drop };
}
