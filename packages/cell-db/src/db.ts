import { join } from 'node:path';
import type { QueryResult, QueryResultRow } from 'pg';

/**
 * Anything that runs a query: a `pg.Pool` (each call its own implicit transaction) or a
 * `pg.PoolClient` inside `withTransaction` (the caller composes several calls atomically).
 */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** Directory of the cell database's numbered SQL migrations (run with `runMigrations(pool, { kind: 'cell', dir })`). */
export const CELL_DB_MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

/** Bad input to a repository function: nothing was written. `code` is stable. */
export class CellDbError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'CellDbError';
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Throws `cell_db.invalid_uuid` unless `value` is a canonical uuid; returns it lowercased. */
export function checkUuid(value: string, what: string): string {
  if (!UUID_RE.test(value)) throw new CellDbError('cell_db.invalid_uuid', `${what} must be a uuid, got ${JSON.stringify(value)}`);
  return value.toLowerCase();
}

/** Throws `cell_db.invalid_uuid` unless every value is a uuid; returns them lowercased. */
export function checkUuids(values: readonly string[], what: string): string[] {
  return values.map((v) => checkUuid(v, what));
}
