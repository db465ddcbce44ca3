import type { Selection } from '@cellsched/wire';

/** What claiming one alternate gave. */
export type AlternateClaim = { readonly kind: 'claimed' } | { readonly kind: 'skipped'; readonly reason: string };

/** The in-cell retry's decision: the host to build on next, or none left. */
export type RescheduleDecision =
  | { readonly kind: 'rescheduled'; readonly selection: Selection; readonly remaining: readonly Selection[]; readonly skipped: readonly SkippedAlternate[] }
  | { readonly kind: 'exhausted'; readonly skipped: readonly SkippedAlternate[] };

export interface SkippedAlternate { readonly host: string; readonly reason: string }

/**
 * Nova's conductor `build_instances` retry loop over the alternates (no scheduler call):
 * try each in order, claim it, first success wins and keeps the alternates after it; a
 * failed claim drops that host. The claim function must be safe to repeat (the whole
 * decision is re-run if the conductor dies before its effects are recorded).
 */
export async function chooseAlternate(alternates: readonly Selection[], claim: (s: Selection) => Promise<AlternateClaim>): Promise<RescheduleDecision> {
  const skipped: SkippedAlternate[] = [];
  for (let i = 0; i < alternates.length; i++) {
    const selection = alternates[i] as Selection;
    const outcome = await claim(selection);
    if (outcome.kind === 'claimed') return { kind: 'rescheduled', selection, remaining: alternates.slice(i + 1), skipped };
    skipped.push({ host: selection.serviceHost, reason: outcome.reason });
  }
  return { kind: 'exhausted', skipped };
}

/** Nova's MaxRetriesExceeded text for a build whose alternates are all gone. Pure. */
export function maxRetriesMessage(instanceUuid: string): string {
  return `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${instanceUuid}.`;
}

/** The instance-action detail of a reschedule. Pure. */
export function rescheduleDetail(failedHost: string, reason: string, nextHost: string): string {
  return `build on host ${failedHost} failed (${reason}), rescheduled to host ${nextHost}`;
}
