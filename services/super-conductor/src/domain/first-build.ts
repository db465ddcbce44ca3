/**
 * The first build of a scheduled instance, as pure decisions and one flow over the ports: the
 * cast to the chosen host, and what a cast the broker refuses becomes (the boot's reschedule
 * starts here: the cell conductor retries the alternates in the cell). Also when a redelivered
 * `schedule_and_build_instances` casts the build again.
 */
import {
  FAILURE_CODES,
  makeFailure,
  type BuildAndRunInstanceRequest,
  type BuildInstancesRequest,
  type Instance,
  type RequestSpec,
  type Selection,
} from '@cellsched/wire';
import type { CellBuildPorts, ConductorLog } from '../ports';

/** A build for `compute.<host>` in one cell: attempt 1, the chosen host first, then the alternates. */
export interface FirstBuild {
  readonly instanceUuid: string;
  readonly cellName: string;
  readonly host: string;
  readonly request: BuildAndRunInstanceRequest;
}

/** The first build of an instance on the chosen host (`hostList[0]`); none without a host. Pure. */
export function firstBuild(
  instance: Instance,
  attempt: number,
  cellName: string,
  hostList: readonly Selection[],
  spec: RequestSpec,
  requestId: string,
): FirstBuild | undefined {
  const host = hostList[0]?.serviceHost;
  if (host === undefined) return undefined;
  return {
    instanceUuid: instance.uuid,
    cellName,
    host,
    request: { instance, requestSpec: spec, hostList: [...hostList], attempt, requestId },
  };
}

/**
 * What a first build the broker refused becomes: the cell conductor's `build_instances` for that
 * host's failure (fault `super_conductor.build.unroutable`), with the alternates after it, exactly
 * as after a compute's reschedulable failure. Pure.
 */
export function refusedBuildReport(b: FirstBuild): BuildInstancesRequest {
  const failure = makeFailure(
    FAILURE_CODES.superConductor.buildUnroutable,
    `the broker refused the build cast to compute.${b.host}: no compute serves host ${b.host}`,
    { retryable: true, expected: true },
  );
  const r = b.request;
  return {
    instance: r.instance,
    requestSpec: r.requestSpec,
    hostList: r.hostList.slice(1),
    failedHost: b.host,
    attempt: r.attempt,
    requestId: r.requestId,
    failure,
  };
}

/** The fault of a refused first build when the cell has no conductor queue either. Pure. */
export function noConductorFault(b: FirstBuild): { readonly message: string; readonly details: string } {
  return {
    message: `Build of instance ${b.instanceUuid} could not start: no compute serves host ${b.host} and cell ${b.cellName} has no conductor to retry it`,
    details: FAILURE_CODES.superConductor.buildUnroutable,
  };
}

/**
 * Casts the first build. One the broker refuses (no compute serves the chosen host: removed, or its
 * process restarted without it) is that host's failure, never a silent end: it goes to the cell
 * conductor as a reschedule; if the cell has no conductor queue either, the claim is released and
 * the instance goes to ERROR with a fault saying so (guarded: only while it still builds there).
 * Idempotent: the compute dedups by (host, instance, attempt), the cell conductor by (host, attempt).
 */
export async function castFirstBuild(ports: CellBuildPorts, log: ConductorLog, b: FirstBuild): Promise<'cast' | 'rescheduled' | 'error'> {
  if ((await ports.cell.buildAndRunInstance(b.host, b.request)) === 'sent') return 'cast';
  const fields = { instance_uuid: b.instanceUuid, host: b.host, target_cell: b.cellName };
  log.warn(fields, 'build cast refused by the broker: handing it to the cell conductor');
  if ((await ports.cell.buildInstances(refusedBuildReport(b))) === 'sent') return 'rescheduled';
  await ports.claims.release([b.instanceUuid]);
  await ports.builds.failBuild(b.instanceUuid, b.host, b.request.requestId, noConductorFault(b));
  log.error(fields, 'build refused and the cell has no conductor queue: instance in ERROR');
  return 'error';
}

/** What a redelivered cast finds for an instance a previous delivery already created in a cell. */
export interface ResumeState {
  /** This delivery deleted the build request (false: it was already gone). */
  readonly buildRequestRemovedNow: boolean;
  /** The mapping named the cell before this delivery. */
  readonly mappedBefore: boolean;
  readonly queuedForDelete: boolean;
  /** The cell's bus is open (a real cell, not cell0). */
  readonly cellHasBus: boolean;
  readonly vmState: string;
  readonly buildAttempt: number;
  readonly host: string | null;
}

/**
 * A redelivery of a cast a previous delivery already acted on: `clean_up` when the user deleted the
 * server meanwhile (the build request was gone before this delivery, and the mapping was not ours
 * yet or is queued for delete); `recast` while the instance still builds its first attempt (the
 * compute ignores an attempt it already ran); otherwise `settled`. Pure.
 */
export function resumeStep(s: ResumeState): 'clean_up' | 'recast' | 'settled' {
  if (!s.buildRequestRemovedNow && (!s.mappedBefore || s.queuedForDelete) && s.cellHasBus) return 'clean_up';
  if (!s.cellHasBus || s.vmState !== 'building' || s.buildAttempt !== 1 || s.host === null) return 'settled';
  return 'recast';
}
