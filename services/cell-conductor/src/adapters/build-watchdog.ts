import { listInstanceActions } from '@cellsched/cell-db';
import { makeFailure } from '@cellsched/grpc';
import { withTransaction } from '@cellsched/db';
import type { BuildInstancesRequest } from '@cellsched/wire';
import type { Logger } from 'pino';
import { castNextBuild, reschedule, type BuildDeps } from './reschedule-handler';

/** A building instance whose deadline passed on a host that stopped heartbeating. */
interface StuckBuild { uuid: string; host: string; build_attempt: number }

export interface WatchdogOptions {
  /** A service whose last heartbeat is older than this is down (Nova's service_down_time). */
  readonly serviceDownTimeMs: number;
  readonly batch?: number;
}

/**
 * Builds past their deadline (`build_deadline_at`, else last update + build timeout) whose
 * host's nova-compute service is down (heartbeat older than service_down_time, forced down,
 * or never registered). Read-only.
 */
async function findStuckBuilds(deps: BuildDeps, o: WatchdogOptions): Promise<StuckBuild[]> {
  const r = await deps.pool.query<StuckBuild>(
    `SELECT i.uuid, i.host, i.build_attempt FROM instances i
     LEFT JOIN services s ON s.host = i.host AND s."binary" = 'nova-compute' AND s.deleted_at IS NULL
     WHERE i.vm_state = 'building' AND i.deleted_at IS NULL AND i.host IS NOT NULL
       AND coalesce(i.build_deadline_at, i.updated_at + $1 * interval '1 millisecond') < now()
       AND (s.id IS NULL OR s.forced_down OR coalesce(s.last_seen_up, s.created_at) < now() - $2 * interval '1 millisecond')
     ORDER BY coalesce(i.build_deadline_at, i.updated_at) LIMIT $3`,
    [deps.buildTimeoutMs, o.serviceDownTimeMs, o.batch ?? 100]);
  return r.rows;
}

async function retryStuck(deps: BuildDeps, s: StuckBuild, log: Logger): Promise<void> {
  const next = await withTransaction(deps.pool, async (c) => {
    const actions = await listInstanceActions(c, s.uuid);
    const requestId = actions.find((a) => a.action === 'create')?.requestId ?? '';
    const req: BuildInstancesRequest = {
      instance: undefined, requestSpec: undefined, hostList: [], failedHost: s.host, attempt: s.build_attempt, requestId,
      failure: makeFailure('cell_conductor.build.host_down', `build deadline passed and host ${s.host} is down`, { retryable: true, expected: true }),
    };
    // NOTE: reschedule() locks the row and re-checks (host, attempt): if the compute reported
    // meanwhile, or another watchdog tick got here first, nothing happens (exactly once).
    return reschedule(c, deps, req, s.uuid, { alternatesFromRow: true });
  });
  log.warn({ instance_uuid: s.uuid, host: s.host, attempt: s.build_attempt, next_host: next?.host }, 'build watchdog retried a lost build');
  if (next !== undefined) await castNextBuild(deps, next);
}

/**
 * Beyond Nova: a build lost with its host (the compute died and stays down) is retried on
 * its alternates instead of staying in BUILD, once per lost attempt: the retry bumps
 * build_attempt, so the same attempt is never retried twice, and a late success from the
 * dead host is refused and its guest terminated. Returns how many builds it moved on.
 */
export async function runBuildWatchdog(deps: BuildDeps, o: WatchdogOptions, log: Logger): Promise<number> {
  const stuck = await findStuckBuilds(deps, o);
  for (const s of stuck) await retryStuck(deps, s, log);
  return stuck.length;
}
