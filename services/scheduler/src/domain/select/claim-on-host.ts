import type { AllocationCandidate, GetAllocationCandidatesRequest } from '@cellsched/wire';
import type { ClaimConsumer, Claimer, HostStateSnapshot } from '../../ports';
import { firstFittingCandidate, type HostState, type ResourceUsage } from '../host-state';

/** How one host's claim ended, and how many conflict retries it took. */
export type HostClaimResult =
  | { readonly kind: 'claimed'; readonly candidate: AllocationCandidate; readonly retries: number }
  | { readonly kind: 'no_capacity'; readonly retries: number }
  | { readonly kind: 'group_policy'; readonly retries: number }
  | { readonly kind: 'conflict_exhausted'; readonly retries: number };

/** What claiming needs: the ports, the request's query (to re-read a candidate) and the retry bound. */
export interface ClaimDeps {
  readonly claimer: Claimer;
  readonly snapshot: HostStateSnapshot;
  readonly query: GetAllocationCandidatesRequest;
  readonly maxConflictRetries: number;
  /** A move's migration consumer: claims are move claims (the source goes to it in the same write). */
  readonly migrationUuid?: string | undefined;
}

/** The request's query restricted to one compute node's tree (placement `in_tree`), unlimited. */
export function queryForHost(query: GetAllocationCandidatesRequest, rootUuid: string): GetAllocationCandidatesRequest {
  return { ...query, limit: 0, groups: query.groups.map((g) => ({ ...g, inTree: rootUuid })) };
}

/**
 * After a conflict, re-read this host's candidates and usage from placement, so the next try uses
 * what placement holds now (this request's own earlier claims included).
 */
async function refreshHost(host: HostState, deps: ClaimDeps): Promise<void> {
  const fresh = await deps.snapshot.getAllocationCandidates(queryForHost(deps.query, host.record.uuid), { fresh: true });
  host.allocationCandidates = fresh.allocationRequests;
  for (const [uuid, summary] of Object.entries(fresh.providerSummaries)) {
    const usage = new Map<string, ResourceUsage>();
    for (const [rc, s] of Object.entries(summary.resources)) usage.set(rc, { capacity: s.capacity, used: s.used });
    host.providers.set(uuid, usage);
  }
}

/**
 * Claims for the consumer on one host. A concurrent-update conflict is retried at once on the same
 * host, re-reading its candidate, at most `maxConflictRetries` times (Nomad's bounded optimistic
 * retry); no capacity (in placement, or already in this request's own accounting) or the server
 * group's policy (placement's check) gives up on the host. A move claims with `claimMove` (same
 * outcomes). Throws whatever the ports throw.
 */
export async function claimOnHost(host: HostState, consumer: ClaimConsumer, deps: ClaimDeps): Promise<HostClaimResult> {
  let retries = 0;
  for (;;) {
    const candidate = firstFittingCandidate(host);
    if (candidate === undefined) return { kind: 'no_capacity', retries };
    const outcome =
      deps.migrationUuid === undefined
        ? await deps.claimer.claim(consumer, candidate, { replace: true })
        : await deps.claimer.claimMove(consumer, candidate, deps.migrationUuid);
    if (outcome.kind === 'claimed') return { kind: 'claimed', candidate, retries };
    if (outcome.kind === 'no_capacity') return { kind: 'no_capacity', retries };
    if (outcome.kind === 'group_policy') return { kind: 'group_policy', retries };
    if (retries >= deps.maxConflictRetries) return { kind: 'conflict_exhausted', retries };
    retries += 1;
    await refreshHost(host, deps);
  }
}
