/**
 * Per-request-group preparation (Placement's RequestGroupSearchContext): names resolved to
 * ids, aggregate and tree filters, and the providers with capacity for each requested class.
 */
import { CandidateQueryError, NoCandidates } from './errors';
import { aggregateMembers, classIndex } from './snapshot-index';
import type { CandidateSnapshot, ProviderNode, RequestGroup } from './types';

/** A request group ready to search: ids instead of names, filters precomputed. */
export interface GroupContext {
  readonly group: RequestGroup;
  /** [resource class id, amount] in query order. */
  readonly resources: readonly (readonly [number, number])[];
  readonly requiredTraits: readonly (readonly number[])[];
  readonly forbiddenTraits: readonly number[];
  /** Providers in every member_of set; null when the group has no member_of. */
  readonly rpsInAggs: ReadonlySet<number> | null;
  /** Providers in any forbidden aggregate; null when none is forbidden. */
  readonly rpsInForbiddenAggs: ReadonlySet<number> | null;
  readonly treeRootId: number | null;
  /** Resource class id -> providers (restricted to treeRootId) that fit the amount. */
  readonly rpsWithResource: ReadonlyMap<number, readonly ProviderNode[]>;
}

/** Placement's "No such trait(s)" lookup. */
export function traitIds(snap: CandidateSnapshot, names: readonly string[]): number[] {
  return names.map((name) => {
    const id = snap.traitIdByName.get(name);
    if (id === undefined) throw new CandidateQueryError(`No such trait(s): ${name}.`);
    return id;
  });
}

/** Providers that are members of at least one aggregate of each inner list. */
export function providersInAggregates(snap: CandidateSnapshot, memberOf: readonly (readonly string[])[]): Set<number> {
  const idSets = memberOf.map((uuids) => uuids.map((u) => snap.aggregateIdByUuid.get(u)).filter((id): id is number => id !== undefined));
  if (idSets.length === 0) return new Set(snap.providers.keys());
  let result: Set<number> | null = null;
  if (idSets.some((ids) => ids.length === 0)) return new Set();
  for (const ids of idSets) {
    const any = new Set<number>();
    for (const agg of ids) for (const id of aggregateMembers(snap, agg)) if (result === null || result.has(id)) any.add(id);
    result = any;
  }
  return result ?? new Set();
}

function resolveResources(snap: CandidateSnapshot, group: RequestGroup): [number, number][] {
  return [...group.resources].map(([name, amount]) => {
    const id = snap.resourceClassIdByName.get(name);
    if (id === undefined) {
      throw new CandidateQueryError(`Invalid resource class in resources parameter: No such resource class ${name}.`);
    }
    return [id, amount];
  });
}

function resolveTreeRoot(snap: CandidateSnapshot, inTree: string | null): number | null {
  if (inTree === null) return null;
  const id = snap.providerIdByUuid.get(inTree);
  const node = id === undefined ? undefined : snap.providers.get(id);
  if (!node) throw new NoCandidates();
  return node.rootId;
}

function providersWithResource(snap: CandidateSnapshot, rcId: number, amount: number, treeRootId: number | null): ProviderNode[] {
  // NOTE: the capacity rule of `fits`, on the class index's columns.
  const { ids, rootIds, used, capacity, minUnit, maxUnit, stepSize } = classIndex(snap, rcId);
  const out: ProviderNode[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (treeRootId !== null && rootIds[i] !== treeRootId) continue;
    if (
      (used[i] as number) + amount <= (capacity[i] as number) &&
      amount >= (minUnit[i] as number) &&
      amount <= (maxUnit[i] as number) &&
      amount % (stepSize[i] as number) === 0
    ) {
      const p = snap.providers.get(ids[i] as number);
      if (p) out.push(p);
    }
  }
  return out;
}

/**
 * Builds the group's context in Placement's order: unknown class (400), no provider in
 * the aggregates (no candidates), unknown trait (400), unknown in_tree provider or no
 * capacity for a class (no candidates).
 */
export function buildGroupContext(snap: CandidateSnapshot, group: RequestGroup): GroupContext {
  const resources = resolveResources(snap, group);
  let rpsInAggs: Set<number> | null = null;
  if (group.memberOf.length > 0) {
    rpsInAggs = providersInAggregates(snap, group.memberOf);
    if (rpsInAggs.size === 0) throw new NoCandidates();
  }
  const requiredTraits = group.requiredTraits.map((any) => traitIds(snap, any));
  const forbiddenTraits = traitIds(snap, group.forbiddenTraits);
  const treeRootId = resolveTreeRoot(snap, group.inTree);
  const rpsWithResource = new Map<number, ProviderNode[]>();
  for (const [rcId, amount] of resources) {
    const rps = providersWithResource(snap, rcId, amount, treeRootId);
    if (rps.length === 0) throw new NoCandidates();
    rpsWithResource.set(rcId, rps);
  }
  const rpsInForbiddenAggs = group.forbiddenAggregates.length > 0 ? providersInAggregates(snap, [group.forbiddenAggregates]) : null;
  return { group, resources, requiredTraits, forbiddenTraits, rpsInAggs, rpsInForbiddenAggs, treeRootId, rpsWithResource };
}
