import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Error of the migration runner; branch on `code`. */
export class MigrationError extends Error {
  /**
   * `db.migration.bad_files` (directory unreadable, bad names, duplicate or missing numbers),
   * `db.migration.checksum_mismatch` (an applied file was edited), `db.migration.newer_than_code`
   * (the database has versions the files lack), `db.migration.kind_mismatch` (the database
   * belongs to another service), `db.migration.lock_timeout` (another runner kept the lock too long), `db.migration.failed` (a file's SQL failed; `cause` holds the pg error).
   */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
    this.code = code;
  }
}

/** One numbered SQL file, e.g. `003_add_consumer_types.sql` -> version 3. */
export interface MigrationFile {
  readonly version: number;
  /** File name without `.sql`, e.g. `003_add_consumer_types`. */
  readonly name: string;
  readonly sql: string;
  /** sha256 hex of the file's bytes. */
  readonly checksum: string;
}

const FILE_NAME = /^(\d+)_([a-z0-9_]+)\.sql$/;

/**
 * Reads `NNN_snake_name.sql` files, sorted by number. Numbers must run 1, 2, 3... with
 * no gap or duplicate; any other `.sql` name is refused (`db.migration.bad_files`), so
 * a typo cannot silently skip a file. Non-`.sql` files (README) are ignored.
 */
export function readMigrationFiles(dir: string): MigrationFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.sql'));
  } catch (err) {
    throw new MigrationError('db.migration.bad_files', `cannot read migrations directory ${dir}: ${(err as Error).message}`);
  }
  const bad = names.filter((n) => !FILE_NAME.test(n));
  if (bad.length > 0)
    throw new MigrationError('db.migration.bad_files', `${dir}: migration files must be named NNN_snake_case.sql: ${bad.join(', ')}`);
  const files = names
    .map((n) => {
      const content = readFileSync(join(dir, n));
      return {
        version: Number(FILE_NAME.exec(n)?.[1]),
        name: n.slice(0, -4),
        sql: content.toString('utf8'),
        checksum: createHash('sha256').update(content).digest('hex'),
      };
    })
    .sort((a, b) => a.version - b.version);
  files.forEach((f, i) => {
    if (f.version !== i + 1) {
      throw new MigrationError(
        'db.migration.bad_files',
        `${dir}: expected migration number ${i + 1}, found ${f.name} (numbers must run 1, 2, 3... without gaps or duplicates)`,
      );
    }
  });
  return files;
}
