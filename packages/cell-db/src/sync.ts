import { runMigrations } from '@cellsched/db';
import type { Pool } from 'pg';
import { CELL_DB_MIGRATIONS_DIR } from './db';

/**
 * Applies a cell database's pending migrations (`nova-manage db sync`; cell0 included).
 * Idempotent and safe to run concurrently (advisory lock). Returns the file names applied.
 * Throws `MigrationError` (e.g. `db.migration.kind_mismatch` on the API database) before any change.
 */
export async function syncCellDb(pool: Pool): Promise<string[]> {
  return runMigrations(pool, { kind: 'cell', dir: CELL_DB_MIGRATIONS_DIR });
}
