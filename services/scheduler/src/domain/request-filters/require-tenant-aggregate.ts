import { addOnce, anyOf, OK, type RequestFilter, unsuffixedGroup } from './types';

const TENANT_KEY_PREFIX = 'filter_tenant_id';

/**
 * Nova's `require_tenant_aggregate` (`[scheduler] limit_tenants_to_placement_aggregate`): the
 * aggregates with a metadata key starting `filter_tenant_id` whose value is the project become
 * `member_of=in:...`. With none, and `placement_aggregate_required_for_tenants`, no host is valid.
 */
export const requireTenantAggregate: RequestFilter = {
  name: 'require_tenant_aggregate',
  enabled: (policy) => policy.limitTenantsToPlacementAggregate,
  apply(query, ctx) {
    const project = ctx.spec.projectId;
    const uuids = ctx.aggregates
      .filter((a) => Object.entries(a.metadata).some(([k, v]) => k.startsWith(TENANT_KEY_PREFIX) && v === project))
      .map((a) => a.uuid);
    if (uuids.length > 0) {
      addOnce(unsuffixedGroup(query).memberOf, anyOf(uuids));
      return OK;
    }
    if (ctx.policy.placementAggregateRequiredForTenants) {
      return { kind: 'no_valid_host', reason: `no host aggregate is available for project ${project}` };
    }
    return OK;
  },
};
