import type {
  AllocationCandidate,
  FilterDiagnosis,
  GetAllocationCandidatesRequest,
  GetAllocationCandidatesResponse,
} from '@cellsched/wire';
import type { HostStateSnapshot } from '../../ports';
import { hostsCount } from '../filters/filter-pipeline';
import type { HostState } from '../host-state';
import type { Prng } from '../prng';
import type { PlacementQueryContext, RequestFilter } from '../request-filters/types';
import { buildPlacementQuery } from '../request-filters/build-placement-query';
import { candidateRoots, hostStatesFromCandidates, rootOf } from './host-states-from-candidates';
import { restrictToRequestedHosts } from './requested-hosts';

/** The hosts a decision starts from, or why there are none before any filter ran. */
export type GatherResult =
  | {
      readonly kind: 'hosts';
      readonly query: GetAllocationCandidatesRequest;
      readonly hosts: HostState[];
      readonly diagnosis: FilterDiagnosis[];
      /** True when only a sample of placement's hosts was kept (the others may still fit). */
      readonly sampled: boolean;
    }
  | { readonly kind: 'no_valid_host'; readonly reason: string; readonly diagnosis: FilterDiagnosis[] };

function describeQuery(query: GetAllocationCandidatesRequest): string {
  return query.groups
    .map((g) =>
      Object.entries(g.resources)
        .map(([rc, n]) => `${rc}=${n}`)
        .join(','),
    )
    .join(' + ');
}

/** An answer's candidates by every root provider they name, in placement's order. */
interface RootIndex {
  readonly roots: string[];
  readonly byRoot: Map<string, AllocationCandidate[]>;
}

/**
 * The root indexes of placement's answers, each built once: the adapter hands the same answer
 * object to many requests (its cached copy), so an answer is indexed once, not once per decision.
 * Held by the scheduler core (one per core, made where main builds it), never at module level;
 * an answer no longer referenced is dropped with its index.
 */
export class RootIndexes {
  private readonly byAnswer = new WeakMap<GetAllocationCandidatesResponse, RootIndex>();

  /** The index of `resp`, built on first use. */
  of(resp: GetAllocationCandidatesResponse): RootIndex {
    let index = this.byAnswer.get(resp);
    if (index === undefined) this.byAnswer.set(resp, (index = buildRootIndex(resp)));
    return index;
  }
}

function buildRootIndex(resp: GetAllocationCandidatesResponse): RootIndex {
  const byRoot = new Map<string, AllocationCandidate[]>();
  for (const c of resp.allocationRequests) {
    for (const root of new Set(c.allocations.map((a) => rootOf(a.resourceProviderUuid, resp.providerSummaries)))) {
      let list = byRoot.get(root);
      if (list === undefined) byRoot.set(root, (list = []));
      list.push(c);
    }
  }
  return { roots: candidateRoots(resp), byRoot };
}

/**
 * `size` distinct roots drawn at random (seeded), and the answer restricted to their candidates.
 * O(size) expected draws, independent of how many hosts placement offered.
 */
function sampleAnswer(
  resp: GetAllocationCandidatesResponse,
  index: RootIndex,
  size: number,
  rng: Prng,
): { roots: string[]; resp: GetAllocationCandidatesResponse } {
  const picked = new Set<string>();
  while (picked.size < size) picked.add(index.roots[rng.int(index.roots.length)] as string);
  const candidates = new Set<AllocationCandidate>();
  for (const root of picked) for (const c of index.byRoot.get(root) ?? []) candidates.add(c);
  return { roots: [...picked], resp: { allocationRequests: [...candidates], providerSummaries: resp.providerSummaries } };
}

/**
 * Steps 1-2 of the pipeline: request filters shape the placement query; placement answers with
 * candidates and summaries; the snapshot adds the compute node records; ignore_hosts and
 * requested_destination narrow the list. Reads only.
 */
export async function gatherHosts(
  ctx: PlacementQueryContext,
  requestFilters: readonly RequestFilter[],
  snapshot: HostStateSnapshot,
  indexes: RootIndexes,
  sample?: { readonly size: number; readonly rng: Prng },
): Promise<GatherResult> {
  const built = buildPlacementQuery(ctx, requestFilters);
  if (built.kind === 'no_valid_host') {
    return {
      kind: 'no_valid_host',
      reason: built.reason,
      diagnosis: [{ filter: built.filter, hostsBefore: 0, hostsAfter: 0, reason: built.reason }],
    };
  }
  const answer = await snapshot.getAllocationCandidates(built.query);
  const index = indexes.of(answer);
  const roots = index.roots;
  const placementLine: FilterDiagnosis = {
    filter: 'allocation_candidates',
    hostsBefore: roots.length,
    hostsAfter: roots.length,
    reason: roots.length === 0 ? `placement has no allocation candidate for ${describeQuery(built.query)}` : '',
  };
  if (roots.length === 0) return { kind: 'no_valid_host', reason: placementLine.reason, diagnosis: [placementLine] };
  // NOTE: Nomad's scoring limit: with a sample, only `size` hosts are looked up, filtered and
  // weighed; the caller starts over with every host if none of them can be claimed.
  const sampled = sample !== undefined && sample.size > 0 && roots.length > sample.size;
  const { roots: looked, resp } = sampled ? sampleAnswer(answer, index, sample.size, sample.rng) : { roots, resp: answer };
  const nodes = await snapshot.getComputeNodes(looked);
  const states = hostStatesFromCandidates(resp, nodes, ctx.policy.defaultAvailabilityZone);
  const snapshotLine: FilterDiagnosis = {
    filter: 'host_state_snapshot',
    hostsBefore: looked.length,
    hostsAfter: states.hosts.length,
    reason: states.unknownRoots.length > 0 ? `no compute node record of a discovered host (${hostsCount(states.unknownRoots.length)})` : '',
  };
  const restricted = restrictToRequestedHosts(states.hosts, ctx.spec);
  return {
    kind: 'hosts',
    query: built.query,
    hosts: restricted.hosts,
    diagnosis: [placementLine, snapshotLine, ...restricted.diagnosis],
    sampled,
  };
}
