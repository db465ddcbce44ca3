import { grantReadOnly } from '@cellsched/db';
import type { Queryable } from './db';

/**
 * What each read-only reader of a cell database may SELECT, and nothing more (DESIGN: the
 * scheduler and the api reach the cell DBs read-only). `cell0`: whether the reader also reads
 * cell0 (the scheduler never does: nothing is scheduled there). A new read must be added here,
 * or the reader's role is refused it.
 */
export const CELL_DB_READERS = Object.freeze({
  scheduler: Object.freeze({ tables: Object.freeze(['services', 'compute_nodes']), cell0: false }),
  api: Object.freeze({
    tables: Object.freeze([
      'instances',
      'instance_faults',
      'instance_actions',
      'instance_actions_events',
      'services',
      'compute_nodes',
      // migrations: os-services DELETE refuses a compute service with in-progress migrations (Nova's 409)
      'migrations',
    ]),
    cell0: true,
  }),
});

/** A reader of the cell databases: a key of {@link CELL_DB_READERS}. */
export type CellDbReader = keyof typeof CELL_DB_READERS;

/** Whether `name` is a reader of the cell databases. Pure. */
export function isCellDbReader(name: string): name is CellDbReader {
  return Object.hasOwn(CELL_DB_READERS, name);
}

/**
 * Gives `role` SELECT on exactly what `reader` reads of the cell database `db` is connected to
 * (CONNECT, USAGE, SELECT; other grants revoked). Run as the cell database's owner after its
 * migrations (`cellsched-manage db sync --read-only-role scheduler=ROLE`), so a cell created at
 * run time is readable by the scheduler and the api without an administrator. Idempotent.
 * Throws `db.role.invalid` for a malformed role name, PostgreSQL's 42704 for a missing role.
 */
export async function grantCellDbReads(db: Queryable, reader: CellDbReader, role: string): Promise<void> {
  await grantReadOnly(db, role, CELL_DB_READERS[reader].tables);
}
