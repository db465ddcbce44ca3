import { checkUuid, type Queryable } from './db';

/**
 * Takes the transaction-scoped lock of one instance's server action (a PostgreSQL advisory lock
 * keyed by the instance uuid, released at commit or rollback): two deliveries of the same cast
 * (a redelivery while the first still runs, or the API's re-cast of an intent it believes lost)
 * schedule one after the other, so the second finds the destination the first recorded. Only
 * within a transaction (`withTransaction`); waits for the holder.
 */
export async function lockInstanceServerAction(db: Queryable, instanceUuid: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('cellsched.server_action:' || $1::text, 0))", [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
}

/**
 * Sets a move's destination (host and node, as the scheduler chose them) while the migration is
 * still in `fromStatus` (the status the super-conductor created it with). Returns false when it
 * is missing or moved on (nothing written). Idempotent.
 */
export async function setMigrationDestination(
  db: Queryable,
  uuid: string,
  dest: { readonly host: string; readonly node: string },
  fromStatus: string,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE migrations SET dest_compute = $2, dest_node = $3, updated_at = now() WHERE uuid = $1 AND deleted_at IS NULL AND status = $4`,
    [checkUuid(uuid, 'migration uuid'), dest.host, dest.node, fromStatus],
  );
  return (r.rowCount ?? 0) > 0;
}
