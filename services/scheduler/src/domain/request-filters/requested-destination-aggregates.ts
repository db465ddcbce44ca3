import { addOnce, anyOf, OK, type RequestFilter, unsuffixedGroup } from './types';

/**
 * Nova's RequestSpec.requested_destination.aggregates (set by request filters and move operations):
 * each entry, a comma-separated list meaning "any of these", becomes one `member_of` of the
 * unsuffixed group; several entries must all hold.
 */
export const requestedDestinationAggregates: RequestFilter = {
  name: 'requested_destination_aggregates',
  enabled: () => true,
  apply(query, ctx) {
    for (const entry of ctx.spec.requestedDestination?.aggregates ?? []) {
      const uuids = entry
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      if (uuids.length > 0) addOnce(unsuffixedGroup(query).memberOf, anyOf(uuids));
    }
    return OK;
  },
};
