import type { CastContext } from '@cellsched/bus';
import type { BuildInstancesRequest } from '@cellsched/wire';
import { normalizeAttempt, type FailureReport } from '../domain/build-attempt';
import { onBuildFailed } from '../domain/build-flow';
import type { BuildPorts } from '../ports';

/** The domain's report of a `build_instances` cast (a compute's reschedulable failure, or the super-conductor's refused first build). Pure. */
export function failureReportOf(req: BuildInstancesRequest): FailureReport {
  return {
    instanceUuid: req.instance?.uuid ?? '',
    failedHost: req.failedHost,
    attempt: normalizeAttempt(req.attempt),
    hostList: req.hostList,
    failure: req.failure,
    requestId: req.requestId,
    requestSpec: req.requestSpec,
    alternatesFrom: 'message',
  };
}

/**
 * `build_instances` (a compute's reschedulable failure): in one transaction holding the
 * instance row, move the claim to the first alternate that fits (placement replace-claim,
 * so the failed host's allocation goes in the same write) and point the instance at it,
 * then cast the build there with the alternates left. None fits: release, ERROR with
 * Nova's MaxRetriesExceeded fault. Idempotent: a stale or repeated cast is recognised by
 * (host, build_attempt) and changes nothing; one whose cast was lost is cast again.
 */
export function buildInstancesHandler(ports: BuildPorts) {
  return (req: BuildInstancesRequest, ctx: CastContext): Promise<void> => onBuildFailed(ports, ctx.logger, failureReportOf(req));
}
