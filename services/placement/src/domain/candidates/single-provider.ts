/**
 * Candidates for a group that one provider must satisfy alone: every suffixed group, and
 * the unsuffixed group when there are neither trees nor sharing providers
 * (Placement's get_provider_ids_matching + _alloc_candidates_single_provider).
 */
import type { GroupContext } from './group-context';
import { traitMembers } from './snapshot-index';
import type { AllocationRequest, ProviderNode } from './types';
import { MISC_SHARES_VIA_AGGREGATE, anchorsForSharingProvider, inFilteredAnchors, type WideContext } from './wide-context';

/** Providers that individually carry, for each OR-set, at least one of its traits. */
function providersWithRequiredTraits(ctx: WideContext, required: readonly (readonly number[])[]): Set<number> {
  const out = new Set<number>();
  for (const p of ctx.snap.providers.values()) {
    if (required.every((any) => any.some((t) => p.traits.has(t)))) out.add(p.id);
  }
  return out;
}

function providersWithAnyTrait(ctx: WideContext, traits: readonly number[]): Set<number> {
  const out = new Set<number>();
  for (const t of traits) for (const id of traitMembers(ctx.snap, t)) out.add(id);
  return out;
}

/**
 * Placement's get_provider_ids_for_traits_and_aggs: `filtered` null means nothing can
 * match, an empty set means no positive filter was applied.
 */
function traitAndAggregateFilter(ctx: WideContext, g: GroupContext): { filtered: Set<number> | null; forbidden: Set<number> } {
  let filtered = new Set<number>();
  if (g.requiredTraits.length > 0) {
    filtered = providersWithRequiredTraits(ctx, g.requiredTraits);
    if (filtered.size === 0) return { filtered: null, forbidden: new Set() };
  }
  if (g.rpsInAggs) {
    filtered = filtered.size > 0 ? new Set([...filtered].filter((id) => g.rpsInAggs?.has(id))) : new Set(g.rpsInAggs);
    if (filtered.size === 0) return { filtered: null, forbidden: new Set() };
  }
  const forbidden = new Set<number>();
  const excluded = [g.rpsInForbiddenAggs, g.forbiddenTraits.length > 0 ? providersWithAnyTrait(ctx, g.forbiddenTraits) : null];
  for (const bad of excluded) {
    if (!bad) continue;
    bad.forEach((id) => forbidden.add(id));
    if (filtered.size > 0) {
      bad.forEach((id) => filtered.delete(id));
      if (filtered.size === 0) return { filtered: null, forbidden };
    }
  }
  return { filtered, forbidden };
}

/** Providers able to satisfy the whole group alone, in provider id order. */
export function providersMatchingGroup(ctx: WideContext, g: GroupContext): ProviderNode[] {
  const { filtered, forbidden } = traitAndAggregateFilter(ctx, g);
  if (filtered === null) return [];
  if (g.resources.length === 0) {
    const all = [...ctx.snap.providers.values()];
    // NOTE: Placement returns nothing here when no positive filter applies and ignores
    // in_tree; a resourceless group means "any provider passing its filters", in its tree.
    return all.filter(
      (p) => (filtered.size === 0 || filtered.has(p.id)) && !forbidden.has(p.id) && (g.treeRootId === null || p.rootId === g.treeRootId),
    );
  }
  // NOTE: every rpsWithResource list is in id order: intersect them by merging.
  const lists = g.resources.map(([rcId]) => g.rpsWithResource.get(rcId) ?? []);
  const last = lists[lists.length - 1] ?? [];
  const others = lists.slice(0, -1);
  const at = others.map(() => 0);
  const out: ProviderNode[] = [];
  for (const p of last) {
    if (filtered.size > 0 ? !filtered.has(p.id) : forbidden.has(p.id)) continue;
    let all = true;
    for (let k = 0; k < others.length; k++) {
      const list = others[k] as readonly ProviderNode[];
      let i = at[k] as number;
      while (i < list.length && (list[i] as ProviderNode).id < p.id) i++;
      at[k] = i;
      if (i >= list.length || (list[i] as ProviderNode).id !== p.id) {
        all = false;
        break;
      }
    }
    if (all) out.push(p);
  }
  return out;
}

export function requestFor(g: GroupContext, p: ProviderNode, anchorRootId: number): AllocationRequest {
  return {
    anchorRootId,
    useSameProvider: g.group.useSameProvider,
    resources: g.resources.map(([rcId, amount]) => ({ providerId: p.id, resourceClassId: rcId, amount })),
    mappings: new Map([[g.group.suffix, new Set([p.id])]]),
  };
}

/**
 * Allocation requests of a single-provider group: one per matching provider anchored at
 * its root, plus, for a sharing provider, one per other tree it shares with.
 */
export function singleProviderCandidates(ctx: WideContext, g: GroupContext): AllocationRequest[] {
  const providers = providersMatchingGroup(ctx, g);
  const shareTrait = ctx.snap.traitIdByName.get(MISC_SHARES_VIA_AGGREGATE);
  const out: AllocationRequest[] = [];
  for (const p of providers) {
    ctx.summarizedRoots.add(p.rootId);
    if (inFilteredAnchors(ctx, p.rootId)) out.push(requestFor(g, p, p.rootId));
    if (shareTrait === undefined || !p.traits.has(shareTrait)) continue;
    for (const anchor of anchorsForSharingProvider(ctx, p.id)) {
      if (anchor === p.rootId || !inFilteredAnchors(ctx, anchor)) continue;
      out.push(requestFor(g, p, anchor));
    }
  }
  return out;
}
