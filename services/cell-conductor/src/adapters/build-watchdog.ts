import { withSavedTrace } from '@cellsched/bus';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { retryStuckBuild } from '../domain/build-flow';
import type { BuildPorts } from '../ports';
import { findStuckBuilds } from './stuck-builds';

export interface WatchdogOptions {
  /** A service whose last heartbeat is older than this is down (Nova's service_down_time). */
  readonly serviceDownTimeMs: number;
  readonly batch?: number;
}

/**
 * Beyond Nova: a build lost with its host (the compute died and stays down, or its service is
 * gone), or lost in flight (no result a build timeout after its deadline), is retried on its
 * alternates instead of staying in BUILD, once per lost attempt (`retryStuckBuild`: the retry
 * bumps build_attempt, so the same attempt is never retried twice, and a late success from the
 * dead host is refused and its guest terminated). Returns how many builds it moved on.
 */
export async function runBuildWatchdog(pool: Pool, ports: BuildPorts, o: WatchdogOptions, log: Logger): Promise<number> {
  const stuck = await findStuckBuilds(pool, {
    buildTimeoutMs: ports.buildTimeoutMs,
    serviceDownTimeMs: o.serviceDownTimeMs,
    batch: o.batch ?? 100,
  });
  // NOTE: each retry is a span of the create's trace (saved on the row), so is the build it casts
  for (const s of stuck) await withSavedTrace('build watchdog retry', s.traceParent, () => retryStuckBuild(ports, log, s));
  return stuck.length;
}
