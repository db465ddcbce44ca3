import { addOnce, anyOf, OK, type RequestFilter, unsuffixedGroup } from './types';

/**
 * Nova's `map_az_to_placement_aggregate` (`[scheduler] query_placement_for_availability_zone`):
 * a requested AZ becomes `member_of=in:<aggregates whose metadata availability_zone is the AZ>`.
 * An AZ no aggregate names (such as the default AZ) adds nothing: AvailabilityZoneFilter decides.
 */
export const mapAzToPlacementAggregate: RequestFilter = {
  name: 'map_az_to_placement_aggregate',
  enabled: (policy) => policy.queryPlacementForAvailabilityZone,
  apply(query, ctx) {
    const az = ctx.spec.availabilityZone;
    if (az === '') return OK;
    const uuids = ctx.aggregates.filter((a) => a.metadata.availability_zone === az).map((a) => a.uuid);
    if (uuids.length > 0) addOnce(unsuffixedGroup(query).memberOf, anyOf(uuids));
    return OK;
  },
};
