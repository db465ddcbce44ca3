import { withSavedTrace } from '@cellsched/bus';
import { listInstanceActions } from '@cellsched/cell-db';
import { makeFailure } from '@cellsched/grpc';
import { withTransaction } from '@cellsched/db';
import { FAILURE_CODES, type BuildInstancesRequest, type Failure } from '@cellsched/wire';
import type { Logger } from 'pino';
import { castNextBuild, castTerminate, reschedule, type BuildDeps } from './reschedule-handler';

/** A building instance on a host that is gone, whose deadline passed on a host that stopped heartbeating, or long ago on any host. */
interface StuckBuild { uuid: string; host: string; build_attempt: number; host_down: boolean; host_gone: boolean; trace_parent: string | null }

export interface WatchdogOptions {
  /** A service whose last heartbeat is older than this is down (Nova's service_down_time). */
  readonly serviceDownTimeMs: number;
  readonly batch?: number;
}

/**
 * Builds on a host that is gone — its nova-compute service deleted (`compute service delete`,
 * or retired when its compute process stopped simulating it) or forced down by the operator —
 * at once, deadline or not: nothing will ever build there. Builds past their deadline
 * (`build_deadline_at`, else last update + build timeout) whose host's service is down
 * (heartbeat older than service_down_time); and builds past their deadline by one more build timeout whatever
 * their host's state: the cast that should have moved them on was lost (dead-lettered after
 * its redeliveries during an outage longer than their budget: a cell cut off from its bus, the
 * database or placement down), and a live compute holding such a build for that long is as
 * good as lost too. Read-only.
 */
async function findStuckBuilds(deps: BuildDeps, o: WatchdogOptions): Promise<StuckBuild[]> {
  const r = await deps.pool.query<StuckBuild>(
    `SELECT uuid, host, build_attempt, host_down, host_gone, trace_parent FROM (
       SELECT i.uuid, i.host, i.build_attempt, i.trace_parent, coalesce(i.build_deadline_at, i.updated_at + $1 * interval '1 millisecond') AS deadline,
              (s.id IS NULL OR s.forced_down) AS host_gone,
              (s.id IS NULL OR s.forced_down OR coalesce(s.last_seen_up, s.created_at) < now() - $2 * interval '1 millisecond') AS host_down
       FROM instances i
       LEFT JOIN services s ON s.host = i.host AND s."binary" = 'nova-compute' AND s.deleted_at IS NULL
       WHERE i.vm_state = 'building' AND i.deleted_at IS NULL AND i.host IS NOT NULL) b
     WHERE host_gone OR (host_down AND deadline < now()) OR deadline < now() - $1 * interval '1 millisecond'
     ORDER BY deadline LIMIT $3`,
    [deps.buildTimeoutMs, o.serviceDownTimeMs, o.batch ?? 100]);
  return r.rows;
}

async function retryStuck(deps: BuildDeps, s: StuckBuild, log: Logger): Promise<void> {
  const next = await withTransaction(deps.pool, async (c) => {
    const actions = await listInstanceActions(c, s.uuid);
    const requestId = actions.find((a) => a.action === 'create')?.requestId ?? '';
    const req: BuildInstancesRequest = {
      instance: undefined, requestSpec: undefined, hostList: [], failedHost: s.host, attempt: s.build_attempt, requestId,
      failure: stuckFailure(s),
    };
    // NOTE: reschedule() locks the row and re-checks (host, attempt): if the compute reported
    // meanwhile, or another watchdog tick got here first, nothing happens (exactly once).
    return reschedule(c, deps, req, s.uuid, { alternatesFromRow: true });
  });
  log.warn({ instance_uuid: s.uuid, host: s.host, attempt: s.build_attempt, host_down: s.host_down, host_gone: s.host_gone, next_host: next?.host }, 'build watchdog retried a lost build');
  if (next !== undefined) await castNextBuild(deps, next, log);
  // NOTE: a live host may still run this attempt (its result cast was lost): only one host keeps the guest
  if (!s.host_gone) await castTerminate(deps, s.host, { instanceUuid: s.uuid, attempt: s.build_attempt, reason: 'build moved on by the watchdog' }, log);
}

/** Why the watchdog moved a build on, as the failure of its host. Pure. */
function stuckFailure(s: StuckBuild): Failure {
  const o = { retryable: true, expected: true };
  if (s.host_gone) return makeFailure(FAILURE_CODES.cellConductor.buildHostGone, `host ${s.host} is gone (its compute service was deleted or forced down)`, o);
  if (s.host_down) return makeFailure(FAILURE_CODES.cellConductor.buildHostDown, `build deadline passed and host ${s.host} is down`, o);
  return makeFailure(FAILURE_CODES.cellConductor.buildTimedOut, `no build result from host ${s.host} a build timeout after the deadline`, o);
}

/**
 * Beyond Nova: a build lost with its host (the compute died and stays down), or lost in
 * flight (no result a build timeout after its deadline), is retried on its alternates instead
 * of staying in BUILD, once per lost attempt: the retry bumps
 * build_attempt, so the same attempt is never retried twice, and a late success from the
 * dead host is refused and its guest terminated. Returns how many builds it moved on.
 */
export async function runBuildWatchdog(deps: BuildDeps, o: WatchdogOptions, log: Logger): Promise<number> {
  const stuck = await findStuckBuilds(deps, o);
  // NOTE: each retry is a span of the create's trace (saved on the row), so is the build it casts
  for (const s of stuck) await withSavedTrace('build watchdog retry', s.trace_parent, () => retryStuck(deps, s, log));
  return stuck.length;
}
