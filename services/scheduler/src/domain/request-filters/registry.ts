import { computeStatusFilter } from './compute-status-filter';
import { mapAzToPlacementAggregate } from './map-az-to-placement-aggregate';
import { requireImageTypeSupport } from './require-image-type-support';
import { requestedDestinationAggregates } from './requested-destination-aggregates';
import { requireTenantAggregate } from './require-tenant-aggregate';
import { resourcesFromRequestSpec } from './resources-from-request-spec';
import { traitsFromRequestSpec } from './traits-from-request-spec';
import type { RequestFilter } from './types';

/**
 * Every request filter, in the order they run. The first three build the groups (Nova's
 * ResourceRequest.from_request_spec); the rest follow Nova's ALL_REQUEST_FILTERS order and only
 * add member_of / root traits, so their relative order cannot change the query, only the reason
 * reported when one of them answers NoValidHost first. Each unit decides from the policy whether it
 * runs (Nova's flags), so enabling one is configuration, and adding one is a new file plus a line here.
 */
export const REQUEST_FILTERS: readonly RequestFilter[] = Object.freeze([
  resourcesFromRequestSpec,
  traitsFromRequestSpec,
  requestedDestinationAggregates,
  requireTenantAggregate,
  mapAzToPlacementAggregate,
  requireImageTypeSupport,
  computeStatusFilter,
]);
