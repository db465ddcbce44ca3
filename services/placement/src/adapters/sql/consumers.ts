import type { Db } from './db';

/** Placement's `incomplete_consumer_project_id` / `_user_id` for consumers written before 1.8. */
export const INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000';

/** Delete consumers among `uuids` that hold no allocation any more. */
export async function deleteConsumersWithoutAllocations(db: Db, uuids: readonly string[]): Promise<void> {
  if (uuids.length === 0) return;
  await db.query(
    `DELETE FROM consumers c WHERE c.uuid = ANY($1::uuid[])
    AND NOT EXISTS (SELECT 1 FROM allocations a WHERE a.consumer_id = c.uuid)`,
    [uuids],
  );
}
