import type { GetAllocationCandidatesResponse } from '@cellsched/wire';
import type { HostState, ResourceUsage } from '../host-state';
import type { ClaimDeps } from './claim-on-host';

/** Root provider uuid of each candidate (the compute node it lands on), via the provider summaries. */
function rootsOf(fresh: GetAllocationCandidatesResponse): Map<string, GetAllocationCandidatesResponse['allocationRequests']> {
  const byRoot = new Map<string, GetAllocationCandidatesResponse['allocationRequests']>();
  for (const c of fresh.allocationRequests) {
    const first = c.allocations[0]?.resourceProviderUuid;
    const root = first === undefined ? undefined : fresh.providerSummaries[first]?.rootProviderUuid || first;
    if (root !== undefined) byRoot.set(root, [...(byRoot.get(root) ?? []), c]);
  }
  return byRoot;
}

/**
 * Omega's "commit refused → re-read the shared state": after placement refused a claim for
 * capacity, the request's view is stale (other decisions claimed since it was read). Re-run the
 * request's placement query once and, when the answer is complete (under the limit, so it lists
 * every host that still fits), keep only the remaining hosts placement still offers, with their
 * fresh candidates and usage. A limited answer (exactly `limit` candidates) says nothing about the
 * hosts it left out, so the hosts are kept as they are (many hosts still fit: a refusal is rare).
 * Costs one read instead of one refused claim per full host when the cloud fills up.
 */
export async function refreshRemaining(remaining: readonly HostState[], deps: ClaimDeps): Promise<readonly HostState[]> {
  const fresh = await deps.snapshot.getAllocationCandidates(deps.query, { fresh: true });
  const limit = deps.query.limit;
  if (limit > 0 && fresh.allocationRequests.length >= limit) return remaining;
  const byRoot = rootsOf(fresh);
  const kept: HostState[] = [];
  for (const host of remaining) {
    const candidates = byRoot.get(host.record.uuid);
    if (candidates === undefined) continue;
    host.allocationCandidates = candidates;
    for (const c of candidates) {
      for (const a of c.allocations) {
        const summary = fresh.providerSummaries[a.resourceProviderUuid];
        if (summary === undefined) continue;
        const usage = new Map<string, ResourceUsage>();
        for (const [rc, s] of Object.entries(summary.resources)) usage.set(rc, { capacity: s.capacity, used: s.used });
        host.providers.set(a.resourceProviderUuid, usage);
      }
    }
    kept.push(host);
  }
  return kept;
}
