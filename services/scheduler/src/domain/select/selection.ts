import type { AllocationCandidate, Selection } from '@cellsched/wire';
import type { HostState } from '../host-state';

/**
 * The allocation request as placement's REST API shapes it, kept opaque downstream:
 * `{"allocations": {rp: {"resources": {...}}}, "mappings": {suffix: [rp, ...]}}`.
 */
export function allocationRequestJson(candidate: AllocationCandidate): string {
  const allocations: Record<string, { resources: Record<string, number> }> = {};
  for (const a of candidate.allocations) allocations[a.resourceProviderUuid] = { resources: { ...a.resources } };
  const mappings: Record<string, string[]> = {};
  for (const [suffix, m] of Object.entries(candidate.mappings)) mappings[suffix] = [...m.providerUuids];
  return JSON.stringify({ allocations, mappings });
}

/** Nova's Selection for a host and the candidate it was (or would be) claimed with. */
export function toSelection(host: HostState, candidate: AllocationCandidate, allocationRequestVersion: string): Selection {
  return {
    computeNodeUuid: host.record.uuid,
    serviceHost: host.record.host,
    nodename: host.record.nodename,
    cellUuid: host.record.cellUuid,
    availabilityZone: host.availabilityZone,
    allocationRequest: { json: allocationRequestJson(candidate), version: allocationRequestVersion },
  };
}
