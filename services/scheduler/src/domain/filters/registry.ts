import { InvalidSchedulerPolicy } from '../errors';
import { aggregateInstanceExtraSpecsFilter } from './aggregate-instance-extra-specs-filter';
import { availabilityZoneFilter } from './availability-zone-filter';
import { computeCapabilitiesFilter } from './compute-capabilities-filter';
import { computeFilter } from './compute-filter';
import { differentHostFilter } from './different-host-filter';
import { imagePropertiesFilter } from './image-properties-filter';
import { sameHostFilter } from './same-host-filter';
import { serverGroupAffinityFilter } from './server-group-affinity-filter';
import { serverGroupAntiAffinityFilter } from './server-group-anti-affinity-filter';
import type { HostFilter } from './types';

/** Every host filter this scheduler knows, keyed by Nova's class name (the `enabled_filters` values). */
export const FILTER_REGISTRY: ReadonlyMap<string, HostFilter> = new Map(
  [
    computeFilter,
    computeCapabilitiesFilter,
    availabilityZoneFilter,
    imagePropertiesFilter,
    aggregateInstanceExtraSpecsFilter,
    serverGroupAntiAffinityFilter,
    serverGroupAffinityFilter,
    sameHostFilter,
    differentHostFilter,
  ].map((f) => [f.name, f]),
);

/** Unknown names in `enabled_filters`, as readable problems. */
export function unknownFilterNames(names: readonly string[], registry: ReadonlyMap<string, HostFilter> = FILTER_REGISTRY): string[] {
  return names
    .filter((n) => !registry.has(n))
    .map((n) => `enabled_filters: unknown filter ${n} (known: ${[...registry.keys()].join(', ')})`);
}

/**
 * Resolves `enabled_filters` to filters in the configured order. Throws InvalidSchedulerPolicy
 * listing every unknown name.
 */
export function resolveFilters(names: readonly string[], registry: ReadonlyMap<string, HostFilter> = FILTER_REGISTRY): HostFilter[] {
  const problems = unknownFilterNames(names, registry);
  if (problems.length > 0) throw new InvalidSchedulerPolicy(problems);
  return names.map((n) => registry.get(n) as HostFilter);
}
