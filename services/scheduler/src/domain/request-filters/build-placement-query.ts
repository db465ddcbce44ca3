import type { GetAllocationCandidatesRequest, RequestSpec } from '@cellsched/wire';
import type { GroupPolicy } from '../context';
import { REQUEST_FILTERS } from './registry';
import type { PlacementQueryContext, RequestFilter } from './types';

/** The placement query, or the request filter that found no host could ever match. */
export type PlacementQueryResult =
  | { readonly kind: 'ok'; readonly query: GetAllocationCandidatesRequest }
  | { readonly kind: 'no_valid_host'; readonly filter: string; readonly reason: string };

const AFFINITY_HINTS = ['same_host', 'different_host'];
const GROUP_POLICIES: readonly GroupPolicy[] = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'];

/**
 * Nova drops `max_placement_results` for `same_host` / `different_host` hints, so the one host that
 * satisfies them cannot be cut by the limit. We also drop it for server groups (a random subset can
 * miss the group's host, or be only group hosts) and for a requested destination host or node
 * (Nova asks placement with in_tree there; we narrow after the answer, so it must be complete).
 */
export function unlimitedPlacementQuery(spec: RequestSpec): boolean {
  const hinted = AFFINITY_HINTS.some((h) => h in spec.schedulerHints);
  const policy = spec.instanceGroup?.policy ?? '';
  const pinned =
    spec.requestedDestination !== undefined && (spec.requestedDestination.host !== '' || spec.requestedDestination.node !== '');
  return hinted || pinned || (GROUP_POLICIES as readonly string[]).includes(policy);
}

/**
 * Runs the enabled request filters in order and returns the GetAllocationCandidatesRequest.
 * Pure; throws InvalidSchedulerRequest for malformed extra specs (nothing was asked of anyone).
 */
export function buildPlacementQuery(ctx: PlacementQueryContext, filters: readonly RequestFilter[] = REQUEST_FILTERS): PlacementQueryResult {
  const query: GetAllocationCandidatesRequest = {
    groups: [],
    groupPolicy: '',
    limit: 0,
    rootRequired: [],
    rootForbidden: [],
    sameSubtree: [],
    seed: ctx.spec.seed,
  };
  for (const filter of filters) {
    if (!filter.enabled(ctx.policy)) continue;
    const result = filter.apply(query, ctx);
    if (result.kind === 'no_valid_host') return { kind: 'no_valid_host', filter: filter.name, reason: result.reason };
  }
  query.limit = unlimitedPlacementQuery(ctx.spec) ? 0 : ctx.policy.maxPlacementResults;
  return { kind: 'ok', query };
}
