/**
 * What the build decisions read: the instance row under its lock (a snapshot) and what a report
 * about one attempt says. Every decision of the cell conductor is a pure function of these two;
 * the effects it decides are carried out through the ports (src/ports.ts).
 */
import type { Failure, Instance, RequestSpec, Selection } from '@cellsched/wire';

/** The instance row as a decision sees it, read under its row lock. */
export interface InstanceSnapshot {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  /** Nova's vm_state (`building`, `active`, `error`, ...). */
  readonly vmState: string;
  readonly host: string | null;
  readonly node: string | null;
  /** Hosts built on so far (1 = the scheduler's first choice). */
  readonly buildAttempt: number;
  /** The alternates not tried yet, in order. */
  readonly buildHostList: readonly Selection[];
  readonly buildRequestSpec: RequestSpec | undefined;
  /** The instance as casts carry it (tagged with its cell). */
  readonly wire: Instance;
}

/** One attempt, as a compute's report (or a refused cast, or the watchdog) names it. */
export interface AttemptRef {
  readonly host: string;
  /** Normalized ({@link normalizeAttempt}). */
  readonly attempt: number;
}

/**
 * A reschedulable failure of one attempt: a compute's `build_instances`, a build cast the broker
 * refused, or the watchdog's verdict on a lost build. The alternates come from the message, or from
 * the row when there is no message to read them from (the watchdog).
 */
export interface FailureReport {
  readonly instanceUuid: string;
  readonly failedHost: string;
  /** Normalized ({@link normalizeAttempt}). */
  readonly attempt: number;
  /** The alternates the message carries (after the failed host). */
  readonly hostList: readonly Selection[];
  readonly failure: Failure | undefined;
  /** The create's request id (its action's events); '' when unknown. */
  readonly requestId: string;
  /** The message's RequestSpec, kept on the row for later retries; undefined leaves the row's. */
  readonly requestSpec: RequestSpec | undefined;
  readonly alternatesFrom: 'message' | 'row';
}

/** Why a build ends in ERROR: the instance fault (Nova's shape; code 500 like Nova's build faults). */
export interface Fault {
  readonly message: string;
  readonly host: string | null;
  readonly details: string | null;
}

/** The attempt a compute cast names; 0 (unset by an older sender) means the first. Pure. */
export function normalizeAttempt(attempt: number): number {
  return attempt >= 1 ? attempt : 1;
}

/** True when the row still builds the reported attempt on the reported host. Pure. */
export function isCurrentAttempt(inst: InstanceSnapshot, ref: AttemptRef): boolean {
  return inst.host === ref.host && inst.buildAttempt === ref.attempt;
}

/** What a `build_succeeded` report amounts to: go ACTIVE, a repeat of one already applied, or stale (terminate that guest). */
export type SuccessVerdict = 'apply' | 'repeat' | 'stale';

/**
 * `build_succeeded`: applied only while the row builds that attempt on that host; the same report
 * once applied is a repeat; anything else (deleted, moved on by a reschedule or the watchdog,
 * settled in ERROR) is stale, and that host's guest must go. Pure.
 */
export function judgeSuccess(inst: InstanceSnapshot | undefined, ref: AttemptRef): SuccessVerdict {
  if (inst === undefined || !isCurrentAttempt(inst, ref)) return 'stale';
  if (inst.vmState !== 'building') return inst.vmState === 'active' ? 'repeat' : 'stale';
  return 'apply';
}

/** `build_aborted`: applied only while the row builds that attempt on that host; otherwise nothing. Pure. */
export function judgeAbort(inst: InstanceSnapshot | undefined, ref: AttemptRef): inst is InstanceSnapshot {
  return inst !== undefined && inst.vmState === 'building' && isCurrentAttempt(inst, ref);
}

/** The fault of a non-reschedulable failure: the compute's message, its code as details. Pure. */
export function abortFault(failure: Failure | undefined, host: string): Fault {
  return { message: failure?.message ?? 'Build of instance aborted', host, details: failure?.code ?? null };
}
