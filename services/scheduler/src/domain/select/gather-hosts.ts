import type { FilterDiagnosis, GetAllocationCandidatesRequest } from '@cellsched/wire';
import type { HostStateSnapshot } from '../../ports';
import { hostsCount } from '../filters/filter-pipeline';
import type { HostState } from '../host-state';
import type { PlacementQueryContext, RequestFilter } from '../request-filters/types';
import { buildPlacementQuery } from '../request-filters/build-placement-query';
import { candidateRoots, hostStatesFromCandidates } from './host-states-from-candidates';
import { restrictToRequestedHosts } from './requested-hosts';

/** The hosts a decision starts from, or why there are none before any filter ran. */
export type GatherResult =
  | { readonly kind: 'hosts'; readonly query: GetAllocationCandidatesRequest; readonly hosts: HostState[]; readonly diagnosis: FilterDiagnosis[] }
  | { readonly kind: 'no_valid_host'; readonly reason: string; readonly diagnosis: FilterDiagnosis[] };

function describeQuery(query: GetAllocationCandidatesRequest): string {
  return query.groups.map((g) => Object.entries(g.resources).map(([rc, n]) => `${rc}=${n}`).join(',')).join(' + ');
}

/**
 * Steps 1-2 of the pipeline: request filters shape the placement query; placement answers with
 * candidates and summaries; the snapshot adds the compute node records; ignore_hosts and
 * requested_destination narrow the list. Reads only.
 */
export async function gatherHosts(ctx: PlacementQueryContext, requestFilters: readonly RequestFilter[],
  snapshot: HostStateSnapshot): Promise<GatherResult> {
  const built = buildPlacementQuery(ctx, requestFilters);
  if (built.kind === 'no_valid_host') {
    return { kind: 'no_valid_host', reason: built.reason, diagnosis: [{ filter: built.filter, hostsBefore: 0, hostsAfter: 0, reason: built.reason }] };
  }
  const resp = await snapshot.getAllocationCandidates(built.query);
  const roots = candidateRoots(resp);
  const placementLine: FilterDiagnosis = {
    filter: 'allocation_candidates', hostsBefore: roots.length, hostsAfter: roots.length,
    reason: roots.length === 0 ? `placement has no allocation candidate for ${describeQuery(built.query)}` : '',
  };
  if (roots.length === 0) return { kind: 'no_valid_host', reason: placementLine.reason, diagnosis: [placementLine] };
  const nodes = await snapshot.getComputeNodes(roots);
  const states = hostStatesFromCandidates(resp, nodes, ctx.policy.defaultAvailabilityZone);
  const snapshotLine: FilterDiagnosis = {
    filter: 'host_state_snapshot', hostsBefore: roots.length, hostsAfter: states.hosts.length,
    reason: states.unknownRoots.length > 0 ? `no compute node record (${hostsCount(states.unknownRoots.length)})` : '',
  };
  const restricted = restrictToRequestedHosts(states.hosts, ctx.spec);
  return { kind: 'hosts', query: built.query, hosts: restricted.hosts, diagnosis: [placementLine, snapshotLine, ...restricted.diagnosis] };
}
