import type { AllocationCandidate } from '@cellsched/wire';
import { firstFittingCandidate, type HostState } from '../host-state';

/** An alternate host and the (unclaimed) candidate a cell conductor would claim it with. */
export interface Alternate {
  readonly host: HostState;
  readonly candidate: AllocationCandidate;
}

/**
 * Up to `count` alternates for a chosen host (seed 003, Nova's `_get_alternate_hosts`): hosts in
 * the **same cell** as the chosen one, none of the hosts this request chose, each with a candidate
 * that still fits, taken in `ranked` order (filtered and weighed after every claim was made).
 */
export function alternatesFor(
  chosen: HostState,
  ranked: readonly HostState[],
  chosenUuids: ReadonlySet<string>,
  count: number,
): Alternate[] {
  const out: Alternate[] = [];
  for (const host of ranked) {
    if (out.length >= count) break;
    if (host.record.cellUuid !== chosen.record.cellUuid || chosenUuids.has(host.record.uuid)) continue;
    const candidate = firstFittingCandidate(host);
    if (candidate !== undefined) out.push({ host, candidate });
  }
  return out;
}
