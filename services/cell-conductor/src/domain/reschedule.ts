/**
 * The in-cell retry of a failed build (Nova's conductor `build_instances` with the alternates, no
 * scheduler call), as pure decisions: what a failure report means for the row, which alternate to
 * build on next, and what to write. `build-flow.ts` carries them out through the ports.
 */
import type { RequestSpec, Selection } from '@cellsched/wire';
import { isCurrentAttempt, type Fault, type FailureReport, type InstanceSnapshot } from './build-attempt';
import { buildCastFor, type BuildCast } from './build-cast';

/** What a failure report means for the locked row. */
export type ReportVerdict =
  /** Nothing to do: the instance is gone, settled, or the report is about an older attempt (or a repeat with nothing to re-send). */
  | { readonly kind: 'ignore'; readonly reason: 'gone' | 'settled' | 'stale' | 'repeat' }
  /** A redelivery after the decision committed but before its cast: send that build again, decide nothing new. */
  | { readonly kind: 'recast'; readonly build: BuildCast }
  /** This attempt failed: record it, then try these alternates in order. */
  | { readonly kind: 'retry'; readonly inst: InstanceSnapshot; readonly alternates: readonly Selection[] };

/**
 * Judges a failure report against the row: guarded by (host, attempt), so a stale or repeated
 * report changes nothing, and a repeat whose cast may have been lost re-sends the build the row
 * already names (the compute and `build_succeeded` are idempotent). Pure.
 */
export function judgeFailureReport(inst: InstanceSnapshot | undefined, r: FailureReport): ReportVerdict {
  if (inst === undefined) return { kind: 'ignore', reason: 'gone' };
  if (inst.vmState !== 'building') return { kind: 'ignore', reason: 'settled' };
  // NOTE: a redelivery after the commit but before the cast: the row already names the next host
  if (inst.buildAttempt === r.attempt + 1 && inst.host !== r.failedHost) {
    const current = r.hostList.find((s) => s.serviceHost === inst.host);
    const build =
      current === undefined || r.alternatesFrom === 'row' ? undefined : buildCastFor(inst, [current, ...inst.buildHostList], r.requestId);
    return build === undefined ? { kind: 'ignore', reason: 'repeat' } : { kind: 'recast', build };
  }
  if (!isCurrentAttempt(inst, { host: r.failedHost, attempt: r.attempt })) return { kind: 'ignore', reason: 'stale' };
  return { kind: 'retry', inst, alternates: r.alternatesFrom === 'row' ? inst.buildHostList : r.hostList };
}

/** What claiming one alternate gave. */
export type AlternateClaim = { readonly kind: 'claimed' } | { readonly kind: 'skipped'; readonly reason: string };

export interface SkippedAlternate {
  readonly host: string;
  readonly reason: string;
}

/** The in-cell retry's choice: the host to build on next, or none left. */
export type RescheduleDecision =
  | {
      readonly kind: 'rescheduled';
      readonly selection: Selection;
      readonly remaining: readonly Selection[];
      readonly skipped: readonly SkippedAlternate[];
    }
  | { readonly kind: 'exhausted'; readonly skipped: readonly SkippedAlternate[] };

/**
 * Nova's retry loop over the alternates: try each in order, claim it, first success wins and keeps
 * the alternates after it; a failed claim drops that host. The claim function must be safe to
 * repeat (the whole decision is re-run if the conductor dies before its effects are recorded).
 */
export async function chooseAlternate(
  alternates: readonly Selection[],
  claim: (s: Selection) => Promise<AlternateClaim>,
): Promise<RescheduleDecision> {
  const skipped: SkippedAlternate[] = [];
  for (let i = 0; i < alternates.length; i++) {
    const selection = alternates[i] as Selection;
    const outcome = await claim(selection);
    if (outcome.kind === 'claimed') return { kind: 'rescheduled', selection, remaining: alternates.slice(i + 1), skipped };
    skipped.push({ host: selection.serviceHost, reason: outcome.reason });
  }
  return { kind: 'exhausted', skipped };
}

/** The row change that points a build at its next host (guarded on `building` by the repository). */
export interface BuildMove {
  readonly host: string;
  readonly node: string;
  readonly buildAttempt: number;
  readonly buildHostList: readonly Selection[];
  readonly buildDeadlineAt: Date;
  /** Replaces the row's RequestSpec when the message carried one. */
  readonly buildRequestSpec: RequestSpec | undefined;
}

/** What the retry writes once the alternates were tried. */
export type RescheduleChange =
  /** None left: release the claim, ERROR with this fault, host and node cleared. */
  | { readonly kind: 'error'; readonly fault: Fault }
  /** Move the build (and record the reschedule event with `detail`), then cast it with `hostList`. */
  | { readonly kind: 'move'; readonly move: BuildMove; readonly hostList: readonly Selection[]; readonly detail: string };

/** Why the attempt failed, as the events and faults say it. Pure. */
export function failureReason(r: FailureReport): string {
  return r.failure?.message ?? 'build failed';
}

/** The row change of a retry decision, its deadline `buildTimeoutMs` after `now`. Pure. */
export function rescheduleChange(
  inst: InstanceSnapshot,
  r: FailureReport,
  d: RescheduleDecision,
  now: Date,
  buildTimeoutMs: number,
): RescheduleChange {
  const reason = failureReason(r);
  if (d.kind === 'exhausted') {
    const skipped = d.skipped.map((s) => `${s.host}: ${s.reason}`).join('; ');
    const details = `last failure on ${r.failedHost}: ${reason}${skipped === '' ? '' : `; alternates dropped: ${skipped}`}`;
    return { kind: 'error', fault: { message: maxRetriesMessage(inst.uuid), host: r.failedHost, details } };
  }
  const s = d.selection;
  return {
    kind: 'move',
    hostList: [s, ...d.remaining],
    detail: rescheduleDetail(r.failedHost, reason, s.serviceHost, d.skipped),
    move: {
      host: s.serviceHost,
      node: s.nodename,
      buildAttempt: inst.buildAttempt + 1,
      buildHostList: d.remaining,
      buildDeadlineAt: new Date(now.getTime() + buildTimeoutMs),
      buildRequestSpec: r.requestSpec,
    },
  };
}

/** Nova's MaxRetriesExceeded text for a build whose alternates are all gone. Pure. */
export function maxRetriesMessage(instanceUuid: string): string {
  return `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${instanceUuid}.`;
}

/**
 * The instance-action detail of a reschedule, naming the alternates dropped on the way (their
 * claim refused), as the fault of an exhausted build does: the story of every host a build was
 * meant for stays in its events. Pure.
 */
export function rescheduleDetail(failedHost: string, reason: string, nextHost: string, skipped: readonly SkippedAlternate[] = []): string {
  const dropped = skipped.length === 0 ? '' : ` (alternates dropped: ${skipped.map((x) => `${x.host}: ${x.reason}`).join('; ')})`;
  return `build on host ${failedHost} failed (${reason}), rescheduled to host ${nextHost}${dropped}`;
}
