import { InvalidSchedulerRequest } from '../errors';
import { groupFor, OK, type PlacementQueryContext, type RequestFilter, sortedEntries, unsuffixedGroup } from './types';
import type { Flavor, GetAllocationCandidatesRequest } from '@cellsched/wire';
import { parsePlacementSpecKey } from './extra-spec-keys';

/** Nova's convert_mb_to_ceil_gb: swap is in MiB, placement's DISK_GB in GiB, rounded up. */
export function swapGb(swapMb: number): number {
  return Math.ceil(swapMb / 1024);
}

/** VCPU (or PCPU with `hw:cpu_policy=dedicated`), MEMORY_MB, DISK_GB = root + ephemeral + ceil(swap). */
export function resourcesFromFlavor(flavor: Flavor): Record<string, number> {
  const dedicated = flavor.extraSpecs['hw:cpu_policy'] === 'dedicated';
  return {
    [dedicated ? 'PCPU' : 'VCPU']: flavor.vcpus,
    MEMORY_MB: flavor.memoryMb,
    DISK_GB: flavor.rootGb + flavor.ephemeralGb + swapGb(flavor.swap),
  };
}

function parseAmount(key: string, value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new InvalidSchedulerRequest(`extra spec ${key}=${value}: amount must be a non-negative integer`);
  return Number(value);
}

function applyOverrides(query: GetAllocationCandidatesRequest, flavor: Flavor): void {
  for (const [key, value] of sortedEntries(flavor.extraSpecs)) {
    const parsed = parsePlacementSpecKey(key);
    if (parsed?.kind !== 'resources') continue;
    const group = groupFor(query, parsed.suffix);
    // NOTE: an override of VCPU by PCPU (or back) replaces the flavor's CPU amount, as Nova does.
    if (parsed.suffix === '' && (parsed.name === 'VCPU' || parsed.name === 'PCPU')) {
      delete group.resources.VCPU;
      delete group.resources.PCPU;
    }
    group.resources[parsed.name] = parseAmount(key, value);
  }
}

/** Placement refuses zero amounts: Nova drops them (`resources:VCPU=0` asks for no VCPU). */
function dropZeros(query: GetAllocationCandidatesRequest): void {
  for (const group of query.groups) {
    for (const [rc, amount] of Object.entries(group.resources)) if (amount === 0) delete group.resources[rc];
  }
}

function applyGroupPolicy(query: GetAllocationCandidatesRequest, flavor: Flavor): void {
  const policy = flavor.extraSpecs.group_policy;
  const suffixed = query.groups.filter((g) => g.suffix !== '').length;
  if (policy !== undefined && policy !== 'none' && policy !== 'isolate') {
    throw new InvalidSchedulerRequest(`extra spec group_policy=${policy}: must be "none" or "isolate"`);
  }
  if (policy === undefined && suffixed > 1) {
    throw new InvalidSchedulerRequest('extra spec group_policy is required with more than one granular resource group');
  }
  query.groupPolicy = policy ?? '';
}

/**
 * Nova's `resources_from_request_spec` (nova/scheduler/utils.py): the flavor's standard resources
 * in the unsuffixed group, overridden by `resources:RC=N`, plus granular `resourcesN:RC=N` groups
 * and `group_policy`. Boot-from-volume is not modelled yet: the root disk is always counted.
 */
export const resourcesFromRequestSpec: RequestFilter = {
  name: 'resources_from_request_spec',
  enabled: () => true,
  apply(query, ctx: PlacementQueryContext) {
    const group = unsuffixedGroup(query);
    Object.assign(group.resources, resourcesFromFlavor(ctx.flavor));
    applyOverrides(query, ctx.flavor);
    dropZeros(query);
    applyGroupPolicy(query, ctx.flavor);
    return OK;
  },
};
