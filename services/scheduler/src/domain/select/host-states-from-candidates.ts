import type { AllocationCandidate, GetAllocationCandidatesResponse, ProviderSummary } from '@cellsched/wire';
import { hostAvailabilityZone } from '../filters/availability-zone-filter';
import type { ComputeNodeRecord, HostState, ResourceUsage } from '../host-state';

/** Host states built from one placement answer, and how many candidate roots had no record. */
export interface HostStatesFromCandidates {
  readonly hosts: HostState[];
  /** Root provider uuids placement offered that the snapshot has no compute node record for. */
  readonly unknownRoots: string[];
}

/** The root provider of a provider named in the answer (itself when the summaries say nothing). */
export function rootOf(uuid: string, summaries: Readonly<Record<string, ProviderSummary>>): string {
  const root = summaries[uuid]?.rootProviderUuid ?? '';
  return root === '' ? uuid : root;
}

/**
 * The compute node a candidate lands on: the first provider whose root is a known compute node
 * (a sharing provider's root is itself and is not a node), else the first provider's root.
 */
export function candidateRoot(
  candidate: AllocationCandidate,
  summaries: Readonly<Record<string, ProviderSummary>>,
  nodes: ReadonlyMap<string, ComputeNodeRecord>,
): string {
  const roots = candidate.allocations.map((a) => rootOf(a.resourceProviderUuid, summaries));
  return roots.find((r) => nodes.has(r)) ?? roots[0] ?? '';
}

/** Every root provider uuid named by the answer, in placement's order (what to ask the snapshot for). */
export function candidateRoots(resp: GetAllocationCandidatesResponse): string[] {
  const roots = new Set<string>();
  for (const c of resp.allocationRequests) for (const a of c.allocations) roots.add(rootOf(a.resourceProviderUuid, resp.providerSummaries));
  return [...roots];
}

/** A private copy of one provider's usage, so in-request consumption never touches the answer. */
function usageOf(summary: ProviderSummary | undefined): Map<string, ResourceUsage> {
  const usage = new Map<string, ResourceUsage>();
  for (const [rc, s] of Object.entries(summary?.resources ?? {})) usage.set(rc, { capacity: s.capacity, used: s.used });
  return usage;
}

function newHostState(record: ComputeNodeRecord, defaultAz: string, summaries: Readonly<Record<string, ProviderSummary>>): HostState {
  const providers = new Map<string, Map<string, ResourceUsage>>([[record.uuid, usageOf(summaries[record.uuid])]]);
  return {
    record,
    availabilityZone: hostAvailabilityZone(record.aggregates, defaultAz),
    allocationCandidates: [],
    providers,
    numInstancesAdded: 0,
    numIoOps: record.numIoOps,
  };
}

/**
 * Joins placement's candidates and provider summaries with the cells' compute node records into
 * one HostState per compute node, in placement's order. Pure.
 */
export function hostStatesFromCandidates(
  resp: GetAllocationCandidatesResponse,
  nodes: ReadonlyMap<string, ComputeNodeRecord>,
  defaultAz: string,
): HostStatesFromCandidates {
  const byRoot = new Map<string, HostState>();
  const unknown = new Set<string>();
  const summaries = resp.providerSummaries;
  for (const candidate of resp.allocationRequests) {
    const root = candidateRoot(candidate, summaries, nodes);
    const record = nodes.get(root);
    if (record === undefined) {
      unknown.add(root);
      continue;
    }
    let host = byRoot.get(root);
    if (host === undefined) byRoot.set(root, (host = newHostState(record, defaultAz, summaries)));
    host.allocationCandidates.push(candidate);
    for (const a of candidate.allocations) {
      if (!host.providers.has(a.resourceProviderUuid))
        host.providers.set(a.resourceProviderUuid, usageOf(summaries[a.resourceProviderUuid]));
    }
  }
  return { hosts: [...byRoot.values()], unknownRoots: [...unknown] };
}
