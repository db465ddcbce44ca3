import { grantReadOnly } from '@cellsched/db';
import type { Queryable } from './db';

/**
 * What each read-only reader of the API database may SELECT, and nothing more (DESIGN: the
 * scheduler reads host aggregates and server groups, as Nova's, the host mappings (an
 * undiscovered host is never chosen), and where the cells are:
 * `cell_mapping_endpoints`, never `cell_mappings`, whose URLs hold the cell owners'
 * credentials). A new read by the scheduler must be added here, or its role is refused it.
 */
export const API_DB_READERS = Object.freeze({
  scheduler: Object.freeze([
    'aggregates',
    'aggregate_hosts',
    'aggregate_metadata',
    'instance_groups',
    'instance_group_policy',
    'instance_group_member',
    'cell_mapping_endpoints',
    'host_mappings',
  ]),
});

/** A reader of the API database: a key of {@link API_DB_READERS}. */
export type ApiDbReader = keyof typeof API_DB_READERS;

/** Whether `name` is a reader of the API database. Pure. */
export function isApiDbReader(name: string): name is ApiDbReader {
  return Object.hasOwn(API_DB_READERS, name);
}

/**
 * Gives `role` SELECT on exactly what `reader` reads of the API database `db` is connected to
 * (CONNECT, USAGE, SELECT; other grants revoked). Run as the API database's owner after its
 * migrations (`cellsched-manage api_db sync --read-only-role scheduler=ROLE`). Idempotent.
 * Throws `db.role.invalid` for a malformed role name, PostgreSQL's 42704 for a missing role.
 */
export async function grantApiDbReads(db: Queryable, reader: ApiDbReader, role: string): Promise<void> {
  await grantReadOnly(db, role, API_DB_READERS[reader]);
}
