import type { Pool, PoolClient } from 'pg';
import { MigrationError, readMigrationFiles, type MigrationFile } from './migration-files';
import { sqlState } from './pg-errors';

/** Which service's schema a database holds. Cell0 and every cell database are `cell`. */
export type DbKind = 'api' | 'cell' | 'placement';
const KINDS: readonly DbKind[] = ['api', 'cell', 'placement'];

/** pg_advisory_lock(classid, objid) key: one migration lock per database ("cell", 1). */
const LOCK_CLASS = 0x63656c6c;
const LOCK_OBJECT = 1;

export interface MigrateOptions {
  kind: DbKind;
  /** Directory of `NNN_snake_name.sql` files (e.g. `services/placement/migrations`). */
  dir: string;
  /** How long to wait for another starter holding the migration lock (default 120 s; then `db.migration.lock_timeout`). */
  lockTimeoutMs?: number;
}

interface AppliedRow {
  kind: string;
  version: number;
  name: string;
  checksum: string;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  kind       text        NOT NULL,
  version    integer     NOT NULL,
  name       text        NOT NULL,
  checksum   text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, version))`;

function verifyApplied(rows: readonly AppliedRow[], files: readonly MigrationFile[], kind: DbKind, dir: string): void {
  const others = [...new Set(rows.filter((r) => r.kind !== kind).map((r) => r.kind))];
  if (others.length > 0) {
    throw new MigrationError(
      'db.migration.kind_mismatch',
      `database holds the ${others.join(', ')} schema; refusing to apply ${kind} migrations to it (wrong database URL?)`,
    );
  }
  const newer = rows.filter((r) => files[r.version - 1] === undefined);
  if (newer.length > 0) {
    throw new MigrationError(
      'db.migration.newer_than_code',
      `database has ${kind} migration(s) ${newer.map((r) => r.name).join(', ')} that ${dir} lacks: this code is older than the database; deploy newer code`,
    );
  }
  const changed = rows.filter((r) => {
    const f = files[r.version - 1];
    return f?.checksum !== r.checksum || f.name !== r.name;
  });
  if (changed.length > 0) {
    throw new MigrationError(
      'db.migration.checksum_mismatch',
      `applied ${kind} migration(s) changed since they ran: ${changed.map((r) => `${r.name} (${dir})`).join(', ')}; never edit an applied migration, add a new numbered file instead`,
    );
  }
}

function lineOf(sql: string, position: unknown): string {
  const pos = Number(position);
  return Number.isSafeInteger(pos) && pos > 0 ? ` at line ${sql.slice(0, pos).split('\n').length}` : '';
}

async function applyOne(client: PoolClient, kind: DbKind, file: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(file.sql);
    await client.query('INSERT INTO schema_migrations (kind, version, name, checksum) VALUES ($1, $2, $3, $4)', [
      kind,
      file.version,
      file.name,
      file.checksum,
    ]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const where = lineOf(file.sql, (err as { position?: unknown }).position);
    throw new MigrationError('db.migration.failed', `migration ${file.name} failed${where}: ${(err as Error).message}`, { cause: err });
  }
}

async function lock(client: PoolClient, timeoutMs: number): Promise<void> {
  await client.query(`SET lock_timeout = ${Math.max(1, Math.trunc(timeoutMs))}`);
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, LOCK_OBJECT]);
  } catch (err) {
    if (sqlState(err) !== '55P03') throw err;
    throw new MigrationError(
      'db.migration.lock_timeout',
      `another process held the migration lock (pg_advisory_lock(${LOCK_CLASS}, ${LOCK_OBJECT})) for more than ${timeoutMs} ms`,
      { cause: err },
    );
  }
}

async function migrateLocked(client: PoolClient, opts: MigrateOptions, files: readonly MigrationFile[]): Promise<string[]> {
  await client.query(CREATE_TABLE);
  const { rows } = await client.query<AppliedRow>('SELECT kind, version, name, checksum FROM schema_migrations ORDER BY kind, version');
  verifyApplied(rows, files, opts.kind, opts.dir);
  const done = new Set(rows.map((r) => r.version));
  const applied: string[] = [];
  for (const file of files.filter((f) => !done.has(f.version))) {
    await applyOne(client, opts.kind, file);
    applied.push(file.name);
  }
  return applied;
}

/**
 * Brings a database's schema up to date from numbered SQL files and returns the names
 * applied by this call (empty when already current: idempotent). Each file runs in its
 * own transaction together with its `schema_migrations(kind, version, name, checksum,
 * applied_at)` row, so a failed file leaves no trace and earlier files stay applied.
 * Concurrent callers (several replicas starting) are serialized by a PostgreSQL
 * advisory lock; the later ones find nothing to do. Refuses, before changing anything,
 * a database whose applied files were edited, that has versions the directory lacks, or
 * that holds another kind's schema. Throws `MigrationError` (see its codes). Files must
 * not contain BEGIN/COMMIT or statements that cannot run in a transaction.
 */
export async function runMigrations(pool: Pool, opts: MigrateOptions): Promise<string[]> {
  if (!KINDS.includes(opts.kind))
    throw new TypeError(`runMigrations: kind must be one of ${KINDS.join(', ')}, got ${JSON.stringify(opts.kind)}`);
  const files = readMigrationFiles(opts.dir);
  const client = await pool.connect();
  try {
    // NOTE: migrations may take longer than the pool's statement_timeout; the session is
    // destroyed afterwards, so these settings and the lock never leak into the pool.
    await client.query('SET statement_timeout = 0');
    await lock(client, opts.lockTimeoutMs ?? 120_000);
    await client.query('SET lock_timeout = 0');
    const applied = await migrateLocked(client, opts, files);
    await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, LOCK_OBJECT]);
    return applied;
  } finally {
    client.release(true);
  }
}
