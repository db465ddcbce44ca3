import { InvalidSchedulerRequest } from '../errors';
import { parsePlacementSpecKey } from './extra-spec-keys';
import { addOnce, groupFor, OK, type RequestFilter, sortedEntries } from './types';
import type { GetAllocationCandidatesRequest, RequestGroup } from '@cellsched/wire';

function addFlavorTraits(query: GetAllocationCandidatesRequest, extraSpecs: Readonly<Record<string, string>>): void {
  for (const [key, value] of sortedEntries(extraSpecs)) {
    const parsed = parsePlacementSpecKey(key);
    if (parsed?.kind !== 'trait') continue;
    if (value !== 'required' && value !== 'forbidden') {
      throw new InvalidSchedulerRequest(`extra spec ${key}=${value}: must be "required" or "forbidden"`);
    }
    const group = groupFor(query, parsed.suffix);
    addOnce(value === 'required' ? group.required : group.forbidden, parsed.name);
  }
}

/** NOTE: like Nova, an image can only require traits (`trait:X=required`); other values are ignored. */
function addImageTraits(query: GetAllocationCandidatesRequest, properties: Readonly<Record<string, string>>): void {
  for (const [key, value] of sortedEntries(properties)) {
    const parsed = parsePlacementSpecKey(key);
    if (parsed?.kind !== 'trait' || parsed.suffix !== '' || value !== 'required') continue;
    addOnce(groupFor(query, '').required, parsed.name);
  }
}

function assertNoConflict(group: RequestGroup): void {
  const both = group.required.filter((t) => group.forbidden.includes(t));
  if (both.length > 0) {
    throw new InvalidSchedulerRequest(`traits both required and forbidden in group "${group.suffix}": ${both.join(',')}`);
  }
}

/**
 * Required and forbidden traits of the placement query: `trait[N]:X=required|forbidden` in the
 * flavor's extra specs, and `trait:X=required` in the image properties (Nova's ResourceRequest).
 * Throws InvalidSchedulerRequest for a value other than required/forbidden, or a trait both
 * required and forbidden in one group (placement would refuse the query).
 */
export const traitsFromRequestSpec: RequestFilter = {
  name: 'traits_from_request_spec',
  enabled: () => true,
  apply(query, ctx) {
    addFlavorTraits(query, ctx.flavor.extraSpecs);
    if (ctx.image !== undefined) addImageTraits(query, ctx.image.properties);
    query.groups.forEach(assertNoConflict);
    return OK;
  },
};
