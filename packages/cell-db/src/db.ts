import { join } from 'node:path';
import { DbInputError, uuidChecks } from '@cellsched/db';

export type { Queryable } from '@cellsched/db';

/** Directory of the cell database's numbered SQL migrations (run with `runMigrations(pool, { kind: 'cell', dir })`). */
export const CELL_DB_MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

/** Bad input to a repository function: nothing was written. `code` is stable. */
export class CellDbError extends DbInputError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'CellDbError';
  }
}

/** `checkUuid` throws `cell_db.invalid_uuid` unless the value is a canonical uuid (returned lowercased); `checkUuids` for each value. */
export const { checkUuid, checkUuids } = uuidChecks((message) => new CellDbError('cell_db.invalid_uuid', message));
