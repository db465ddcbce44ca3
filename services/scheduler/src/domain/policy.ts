/**
 * The scheduler's decision policy, in Nova's option names (section `[filter_scheduler]` and
 * `[scheduler]`). Plain data: `config.ts` fills it from the environment and the domain validates it.
 */
export interface SchedulerPolicy {
  /** Nova `enabled_filters`: host filter names, run in this order. */
  readonly enabledFilters: readonly string[];
  /** Nova `weight_classes`: weigher names. */
  readonly enabledWeighers: readonly string[];
  /** Nova's `*_weight_multiplier` options by name, e.g. `ram_weight_multiplier`. Missing: the weigher's default. */
  readonly weightMultipliers: Readonly<Record<string, number>>;
  /** Nova `host_subset_size`: choose at random among the best N weighed hosts. */
  readonly hostSubsetSize: number;
  /**
   * Ours (Nomad's scoring limit, "power of k choices"): a single-instance request without a server
   * group or a pinned destination filters and weighs a seeded random sample of this many of
   * placement's candidate hosts instead of all of them; when no sampled host can be claimed it
   * starts over with every candidate. 0: weigh every candidate (Nova).
   */
  readonly hostSampleSize: number;
  /** Nova `shuffle_best_same_weighed_hosts`. */
  readonly shuffleBestSameWeighedHosts: boolean;
  /** Nova `[scheduler] max_placement_results`. */
  readonly maxPlacementResults: number;
  /** Nova `service_down_time` in seconds: an older heartbeat means the service is down. */
  readonly serviceDownTimeSeconds: number;
  /** Nova `default_availability_zone`: the AZ of a host in no AZ aggregate. */
  readonly defaultAvailabilityZone: string;
  /** Nova `[scheduler] limit_tenants_to_placement_aggregate`. */
  readonly limitTenantsToPlacementAggregate: boolean;
  /** Nova `[scheduler] placement_aggregate_required_for_tenants`. */
  readonly placementAggregateRequiredForTenants: boolean;
  /** Nova `[scheduler] query_placement_for_availability_zone`. */
  readonly queryPlacementForAvailabilityZone: boolean;
  /** Nova `[scheduler] query_placement_for_image_type_support`. */
  readonly queryPlacementForImageTypeSupport: boolean;
  /** Tight retries of one host after `placement.concurrent_update` before moving on (ours). */
  readonly claimConflictRetries: number;
}

/**
 * Nova's defaults. `enabled_filters` is Nova's default list plus AvailabilityZoneFilter, SameHostFilter
 * and DifferentHostFilter (they pass every host without their hint, so they cost nothing until a user
 * asks); AggregateInstanceExtraSpecsFilter is opt-in as in Nova, because it also constrains unscoped extra specs (a flavor with `group_policy` would match
 * no host whose aggregates lack that key). Every weigher is on, as Nova's `all_weighers`.
 */
export const DEFAULT_POLICY: SchedulerPolicy = Object.freeze({
  enabledFilters: Object.freeze([
    'ComputeFilter',
    'ComputeCapabilitiesFilter',
    'AvailabilityZoneFilter',
    'ImagePropertiesFilter',
    'ServerGroupAntiAffinityFilter',
    'ServerGroupAffinityFilter',
    'SameHostFilter',
    'DifferentHostFilter',
  ]),
  enabledWeighers: Object.freeze([
    'RAMWeigher',
    'CPUWeigher',
    'DiskWeigher',
    'IoOpsWeigher',
    'BuildFailureWeigher',
    'ServerGroupSoftAffinityWeigher',
    'ServerGroupSoftAntiAffinityWeigher',
    'CrossCellWeigher',
  ]),
  weightMultipliers: Object.freeze({}),
  hostSubsetSize: 1,
  hostSampleSize: 0,
  shuffleBestSameWeighedHosts: false,
  maxPlacementResults: 1000,
  serviceDownTimeSeconds: 60,
  defaultAvailabilityZone: 'nova',
  limitTenantsToPlacementAggregate: false,
  placementAggregateRequiredForTenants: false,
  queryPlacementForAvailabilityZone: true,
  queryPlacementForImageTypeSupport: false,
  claimConflictRetries: 3,
});

/** Every problem with the numbers of a policy (names are checked by the registries), all at once. */
export function policyNumberErrors(p: SchedulerPolicy): string[] {
  const errors: string[] = [];
  const positiveInt = (name: string, v: number): void => {
    if (!Number.isInteger(v) || v < 1) errors.push(`${name} must be an integer >= 1, got ${v}`);
  };
  positiveInt('host_subset_size', p.hostSubsetSize);
  positiveInt('max_placement_results', p.maxPlacementResults);
  positiveInt('service_down_time', p.serviceDownTimeSeconds);
  if (!Number.isInteger(p.hostSampleSize) || p.hostSampleSize < 0)
    errors.push(`host_sample_size must be an integer >= 0, got ${p.hostSampleSize}`);
  if (!Number.isInteger(p.claimConflictRetries) || p.claimConflictRetries < 0) {
    errors.push(`claim_conflict_retries must be an integer >= 0, got ${p.claimConflictRetries}`);
  }
  for (const [name, v] of Object.entries(p.weightMultipliers)) {
    if (!Number.isFinite(v)) errors.push(`${name} must be a finite number, got ${v}`);
  }
  return errors;
}
