import type { Queryable } from './db';

/** Migration statuses that are over (Nova's `get_in_progress_by_host_and_node` excludes them). */
const MIGRATION_DONE = ['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done'];

/** What still uses a compute host: Nova refuses to delete its service while anything does. */
export interface HostUsage {
  /** Instances on the host that are not deleted (any vm_state, as Nova's `get_count_by_hosts`). */
  readonly instances: number;
  /** In-progress migrations from or to one of the host's compute nodes (`uuid:status`). */
  readonly migrations: readonly string[];
}

/** Instances and in-progress migrations on a host (and its nodes, by hypervisor hostname). Read-only. */
export async function hostUsage(db: Queryable, host: string, nodenames: readonly string[]): Promise<HostUsage> {
  const i = await db.query<{ n: string }>('SELECT count(*) AS n FROM instances WHERE host = $1 AND deleted_at IS NULL', [host]);
  const m = await db.query<{ m: string }>(
    `SELECT uuid::text || ':' || status AS m FROM migrations
     WHERE deleted_at IS NULL AND NOT (status = ANY($3::text[]))
       AND ((source_compute = $1 AND source_node = ANY($2::text[])) OR (dest_compute = $1 AND dest_node = ANY($2::text[])))
     ORDER BY id`,
    [host, [...nodenames], MIGRATION_DONE],
  );
  return { instances: Number(i.rows[0]?.n ?? 0), migrations: m.rows.map((r) => r.m) };
}
