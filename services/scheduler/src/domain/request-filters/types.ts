import type { Flavor, GetAllocationCandidatesRequest, ImageMeta, RequestGroup, RequestSpec } from '@cellsched/wire';
import type { HostAggregate } from '../host-state';
import type { SchedulerPolicy } from '../policy';

/** What a request filter may read: the spec, the policy and the aggregates (with metadata) of the snapshot. */
export interface PlacementQueryContext {
  readonly spec: RequestSpec;
  readonly flavor: Flavor;
  readonly image: ImageMeta | undefined;
  readonly policy: SchedulerPolicy;
  readonly aggregates: readonly HostAggregate[];
}

/** The outcome of one request filter: "no_valid_host" is an expected answer, not an error. */
export type RequestFilterResult = { readonly kind: 'ok' } | { readonly kind: 'no_valid_host'; readonly reason: string };

/**
 * Nova's request filter (nova/scheduler/request_filter.py): shapes the placement query before any
 * host is looked at. Contract: pure and deterministic; it only adds to `query` (never removes what an
 * earlier unit put there); throws `InvalidSchedulerRequest` for malformed input.
 */
export interface RequestFilter {
  /** Nova's name for the unit, the key of the registry. */
  readonly name: string;
  /** Whether the policy turns the unit on (Nova's `[scheduler] query_placement_*` style flags). */
  enabled(policy: SchedulerPolicy): boolean;
  apply(query: GetAllocationCandidatesRequest, ctx: PlacementQueryContext): RequestFilterResult;
}

export const OK: RequestFilterResult = Object.freeze({ kind: 'ok' });

/** An empty request group. */
export function emptyGroup(suffix: string): RequestGroup {
  return { suffix, resources: {}, required: [], forbidden: [], memberOf: [], forbiddenMemberOf: [], inTree: '' };
}

/** The unsuffixed group of the query, created first if missing. */
export function unsuffixedGroup(query: GetAllocationCandidatesRequest): RequestGroup {
  return groupFor(query, '');
}

/** The group with this suffix, created (and appended) if missing. */
export function groupFor(query: GetAllocationCandidatesRequest, suffix: string): RequestGroup {
  let group = query.groups.find((g) => g.suffix === suffix);
  if (group === undefined) {
    group = emptyGroup(suffix);
    if (suffix === '') query.groups.unshift(group);
    else query.groups.push(group);
  }
  return group;
}

/** Adds a value to a list once. */
export function addOnce(list: string[], value: string): void {
  if (!list.includes(value)) list.push(value);
}

/** Placement's member_of entry for "any of these aggregates". */
export function anyOf(uuids: readonly string[]): string {
  const sorted = [...uuids].sort();
  return sorted.length === 1 ? (sorted[0] as string) : `in:${sorted.join(',')}`;
}

/** Entries of a string map in code-point key order (locale-independent, so queries are reproducible). */
export function sortedEntries(map: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
