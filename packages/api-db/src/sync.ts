import { runMigrations } from '@cellsched/db';
import type { Pool } from 'pg';
import { API_DB_MIGRATIONS_DIR } from './db';

/**
 * Applies the API database's pending migrations (`nova-manage api_db sync`). Idempotent and
 * safe to run from several processes at once (the runner takes an advisory lock). Returns the
 * names of the files applied. Throws `MigrationError` (e.g. `db.migration.kind_mismatch` on a
 * cell database) before changing anything.
 */
export async function syncApiDb(pool: Pool): Promise<string[]> {
  return runMigrations(pool, { kind: 'api', dir: API_DB_MIGRATIONS_DIR });
}
