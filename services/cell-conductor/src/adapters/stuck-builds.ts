import type { Pool } from 'pg';
import type { StuckBuild } from '../ports';

interface Row {
  uuid: string;
  host: string;
  build_attempt: number;
  host_down: boolean;
  host_gone: boolean;
  trace_parent: string | null;
}

/** A stuck build with the create's saved trace context (the watchdog's retry joins that trace). */
export type StuckBuildRow = StuckBuild & { readonly traceParent: string | null };

/**
 * Builds on a host that is gone — its nova-compute service deleted (`compute service delete`,
 * or retired when its compute process stopped simulating it) or forced down by the operator —
 * at once, deadline or not: nothing will ever build there. Builds past their deadline
 * (`build_deadline_at`, else last update + build timeout) whose host's service is down
 * (heartbeat older than service_down_time); and builds past their deadline by one more build timeout whatever
 * their host's state: the cast that should have moved them on was lost (dead-lettered after
 * its redeliveries during an outage longer than their budget: a cell cut off from its bus, the
 * database or placement down), and a live compute holding such a build for that long is as
 * good as lost too. Oldest deadline first. Read-only.
 */
export async function findStuckBuilds(
  pool: Pool,
  o: { readonly buildTimeoutMs: number; readonly serviceDownTimeMs: number; readonly batch: number },
): Promise<StuckBuildRow[]> {
  const r = await pool.query<Row>(
    `SELECT uuid, host, build_attempt, host_down, host_gone, trace_parent FROM (
       SELECT i.uuid, i.host, i.build_attempt, i.trace_parent, coalesce(i.build_deadline_at, i.updated_at + $1 * interval '1 millisecond') AS deadline,
              (s.id IS NULL OR s.forced_down) AS host_gone,
              (s.id IS NULL OR s.forced_down OR coalesce(s.last_seen_up, s.created_at) < now() - $2 * interval '1 millisecond') AS host_down
       FROM instances i
       LEFT JOIN services s ON s.host = i.host AND s."binary" = 'nova-compute' AND s.deleted_at IS NULL
       WHERE i.vm_state = 'building' AND i.deleted_at IS NULL AND i.host IS NOT NULL) b
     WHERE host_gone OR (host_down AND deadline < now()) OR deadline < now() - $1 * interval '1 millisecond'
     ORDER BY deadline LIMIT $3`,
    [o.buildTimeoutMs, o.serviceDownTimeMs, o.batch],
  );
  return r.rows.map((s) => ({
    uuid: s.uuid,
    host: s.host,
    attempt: s.build_attempt,
    hostDown: s.host_down,
    hostGone: s.host_gone,
    traceParent: s.trace_parent,
  }));
}
