import { FAILURE_CODES, makeFailure, type BuildAndRunInstanceRequest, type Selection } from '@cellsched/wire';
import type { FailureReport, InstanceSnapshot } from './build-attempt';

/** A build decided and committed, to cast to `compute.<host>` (the compute dedups by host, instance and attempt). */
export interface BuildCast {
  readonly instanceUuid: string;
  readonly host: string;
  readonly request: BuildAndRunInstanceRequest;
}

/**
 * The build of the row's current attempt on its host, with `hostList` (that host first, then the
 * alternates left). None when the row names no host. Pure.
 */
export function buildCastFor(inst: InstanceSnapshot, hostList: readonly Selection[], requestId: string): BuildCast | undefined {
  if (inst.host === null) return undefined;
  return {
    instanceUuid: inst.uuid,
    host: inst.host,
    request: { instance: inst.wire, requestSpec: inst.buildRequestSpec, hostList: [...hostList], attempt: inst.buildAttempt, requestId },
  };
}

/**
 * What a build cast the broker refused amounts to (no queue bound to `compute.<host>`: no compute
 * serves that host): that host failed this attempt, exactly like a compute's reschedulable
 * failure; the alternates are the ones the cast carried after it. Pure.
 */
export function refusedCastReport(cast: BuildCast): FailureReport {
  const { request, host } = cast;
  return {
    instanceUuid: cast.instanceUuid,
    failedHost: host,
    attempt: request.attempt,
    hostList: request.hostList.slice(1),
    requestId: request.requestId,
    requestSpec: request.requestSpec,
    alternatesFrom: 'message',
    failure: makeFailure(
      FAILURE_CODES.cellConductor.buildUnroutable,
      `the broker refused the build cast to compute.${host}: no compute serves host ${host}`,
      { retryable: true, expected: true },
    ),
  };
}
