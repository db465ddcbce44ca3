import type { CastContext } from '@cellsched/bus';
import type { BuildAbortedRequest, BuildSucceededRequest } from '@cellsched/wire';
import { normalizeAttempt } from '../domain/build-attempt';
import { onBuildAborted, onBuildSucceeded } from '../domain/build-flow';
import type { BuildPorts } from '../ports';

/**
 * `build_succeeded`: the instance goes ACTIVE on the reporting host (task none, node,
 * launched_at, retry state cleared) only if it is still building there in the reported
 * attempt. A repeat (redelivered build or cast) changes nothing. A stale report (the
 * instance was deleted, rescheduled by the watchdog, or is owned by another host) makes the
 * conductor cast `terminate_instance` to that compute, so the guest runs on one host only.
 */
export function buildSucceededHandler(ports: BuildPorts) {
  return (req: BuildSucceededRequest, ctx: CastContext): Promise<void> =>
    onBuildSucceeded(ports, ctx.logger, {
      instanceUuid: req.instanceUuid,
      host: req.host,
      attempt: normalizeAttempt(req.attempt),
      node: req.node,
      requestId: req.requestId,
    });
}

/**
 * `build_aborted` (a non-reschedulable failure): release the claim, then ERROR with the
 * compute's failure as the fault, in the transaction holding the row. Only for the
 * building attempt on the reporting host; anything else is a repeat or stale and changes
 * nothing (the release is idempotent, the fault is written with the guarded update).
 */
export function buildAbortedHandler(ports: BuildPorts) {
  return (req: BuildAbortedRequest, ctx: CastContext): Promise<void> =>
    onBuildAborted(ports, ctx.logger, {
      instanceUuid: req.instanceUuid,
      host: req.host,
      attempt: normalizeAttempt(req.attempt),
      requestId: req.requestId,
      failure: req.failure,
    });
}
