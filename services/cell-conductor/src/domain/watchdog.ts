/**
 * The build watchdog's decisions (beyond Nova): a build lost with its host, or lost in flight, is a
 * reschedulable failure of that host, reported as if the compute had sent it.
 */
import { FAILURE_CODES, makeFailure, type Failure } from '@cellsched/wire';
import { normalizeAttempt, type FailureReport } from './build-attempt';

/** A building instance the watchdog found past its bounds (read, not locked: the retry re-checks under the lock). */
export interface StuckBuild {
  readonly uuid: string;
  readonly host: string;
  readonly attempt: number;
  /** Its nova-compute service is down (heartbeat older than service_down_time), forced down, deleted or never registered. */
  readonly hostDown: boolean;
  /** Its nova-compute service is deleted (or never registered) or forced down: nothing will ever build there. */
  readonly hostGone: boolean;
}

/** Why the watchdog moved a build on, as the failure of its host. Pure. */
export function stuckFailure(s: StuckBuild): Failure {
  const o = { retryable: true, expected: true };
  if (s.hostGone)
    return makeFailure(
      FAILURE_CODES.cellConductor.buildHostGone,
      `host ${s.host} is gone (its compute service was deleted or forced down)`,
      o,
    );
  if (s.hostDown) return makeFailure(FAILURE_CODES.cellConductor.buildHostDown, `build deadline passed and host ${s.host} is down`, o);
  return makeFailure(
    FAILURE_CODES.cellConductor.buildTimedOut,
    `no build result from host ${s.host} a build timeout after the deadline`,
    o,
  );
}

/**
 * The failure report of a stuck build: its host failed its attempt; the alternates are the row's
 * (no message to read them from), the RequestSpec stays the row's. Pure.
 */
export function stuckBuildReport(s: StuckBuild, requestId: string): FailureReport {
  return {
    instanceUuid: s.uuid,
    failedHost: s.host,
    attempt: normalizeAttempt(s.attempt),
    hostList: [],
    failure: stuckFailure(s),
    requestId,
    requestSpec: undefined,
    alternatesFrom: 'row',
  };
}

/**
 * Whether the old attempt's guest must be terminated on its host: only when this retry moved the
 * build on (`movedOn`, judged under the row lock) and on a host that may still run it (its result
 * was lost, or it is only down), so one host only keeps the guest; not on a gone host (nothing runs
 * there), and never when the compute's report got there first (its success made the guest the
 * instance's one; its failure means there is none). Pure.
 */
export function terminatesOldAttempt(s: StuckBuild, movedOn: boolean): boolean {
  return movedOn && !s.hostGone;
}
