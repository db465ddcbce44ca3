import { getInstance, type InstanceRecord } from '@cellsched/cell-db';
import type { PoolClient } from 'pg';

/**
 * Locks the live instance row (SELECT ... FOR UPDATE) inside the caller's transaction and
 * returns it, or undefined when it is gone (deleted during the build). Every build handler
 * takes this lock first, so a compute's late report, a reschedule and the watchdog touching
 * the same instance run one after the other and each sees the other's result.
 */
export async function lockInstance(client: PoolClient, uuid: string): Promise<InstanceRecord | undefined> {
  const r = await client.query('SELECT 1 FROM instances WHERE uuid = $1 AND deleted_at IS NULL FOR UPDATE', [uuid]);
  if (r.rowCount === 0) return undefined;
  return getInstance(client, uuid);
}

/** The attempt a compute cast names; 0 (unset by an older sender) means the first. Pure. */
export function normalizeAttempt(attempt: number): number {
  return attempt >= 1 ? attempt : 1;
}
