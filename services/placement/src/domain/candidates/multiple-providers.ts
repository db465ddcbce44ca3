/**
 * Candidates for the unsuffixed group when trees or sharing providers exist: its
 * resources may come from several providers of one tree and from sharing providers
 * associated with that tree (Placement's get_trees_matching_all +
 * _alloc_candidates_multiple_providers).
 */
import type { GroupContext } from './group-context';
import type { AllocationRequest, ResourceRequest } from './types';
import { anchorsForSharingProvider, type WideContext } from './wide-context';

/** anchor root id -> provider ids. */
type RcCandidates = Map<number, Set<number>>;
/** anchor root id -> resource class id -> provider ids. */
type TreeCandidates = Map<number, Map<number, Set<number>>>;

function add(list: RcCandidates, root: number, id: number): void {
  const set = list.get(root);
  if (set) set.add(id);
  else list.set(root, new Set([id]));
}

function sharingWithCapacity(ctx: WideContext, g: GroupContext, rcId: number): number[] {
  const withResource = new Set((g.rpsWithResource.get(rcId) ?? []).map((p) => p.id));
  return [...ctx.sharing].filter((id) => (g.rpsInAggs === null || g.rpsInAggs.has(id)) && withResource.has(id));
}

function filterPairs(list: RcCandidates, keep: (id: number, root: number) => boolean): void {
  for (const [root, ids] of list) {
    for (const id of ids) if (!keep(id, root)) ids.delete(id);
    if (ids.size === 0) list.delete(root);
  }
}

/** The (provider, anchor) pairs able to serve one class, after every group filter. */
function candidatesForClass(ctx: WideContext, g: GroupContext, rcId: number): RcCandidates {
  const list: RcCandidates = new Map();
  for (const p of g.rpsWithResource.get(rcId) ?? []) add(list, p.rootId, p.id);
  if (g.treeRootId === null) {
    for (const s of sharingWithCapacity(ctx, g, rcId)) {
      for (const anchor of anchorsForSharingProvider(ctx, s)) add(list, anchor, s);
    }
  }
  const anchors = ctx.anchorRootIds;
  if (anchors) filterPairs(list, (_id, root) => anchors.has(root));
  const inAggs = g.rpsInAggs;
  // NOTE: an aggregate on the root spans the whole tree.
  if (inAggs) filterPairs(list, (id, root) => inAggs.has(id) || inAggs.has(root));
  const bad = g.rpsInForbiddenAggs;
  if (bad) filterPairs(list, (id, root) => !bad.has(id) && !bad.has(root));
  return list;
}

/** Trees (anchors) able to serve every requested class, each with its providers per class. */
export function treesMatchingAll(ctx: WideContext, g: GroupContext): TreeCandidates {
  let trees: TreeCandidates | null = null;
  for (const [rcId] of g.resources) {
    const list = candidatesForClass(ctx, g, rcId);
    if (list.size === 0) return new Map();
    if (trees === null) {
      trees = new Map([...list].map(([root, ids]) => [root, new Map([[rcId, ids]])]));
    } else {
      for (const root of [...trees.keys()]) {
        const ids = list.get(root);
        if (ids) trees.get(root)?.set(rcId, ids);
        else trees.delete(root);
      }
    }
    if (trees.size === 0) return trees;
  }
  return trees ?? new Map();
}

function traitsSatisfied(ctx: WideContext, g: GroupContext, providerIds: readonly number[]): boolean {
  const all = new Set<number>();
  for (const id of providerIds) {
    const p = ctx.snap.providers.get(id);
    if (!p) return false;
    if (g.forbiddenTraits.some((t) => p.traits.has(t))) return false;
    p.traits.forEach((t) => all.add(t));
  }
  return g.requiredTraits.every((any) => any.some((t) => all.has(t)));
}

function* product(lists: readonly (readonly number[])[], prefix: number[] = []): Generator<number[]> {
  if (prefix.length === lists.length) {
    yield prefix;
    return;
  }
  for (const id of lists[prefix.length] ?? []) yield* product(lists, [...prefix, id]);
}

function treeRequests(ctx: WideContext, g: GroupContext, root: number, byRc: Map<number, Set<number>>): AllocationRequest[] {
  const rcs = [...byRc.keys()].sort((a, b) => a - b);
  const amounts = new Map(g.resources);
  const seen = new Set<string>();
  const out: AllocationRequest[] = [];
  for (const combo of product(rcs.map((rc) => [...(byRc.get(rc) ?? [])]))) {
    if (!traitsSatisfied(ctx, g, combo)) continue;
    const key = combo.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    const resources: ResourceRequest[] = combo.map((id, i) => ({
      providerId: id,
      resourceClassId: rcs[i] as number,
      amount: amounts.get(rcs[i] as number) ?? 0,
    }));
    out.push({ anchorRootId: root, useSameProvider: false, resources, mappings: new Map([[g.group.suffix, new Set(combo)]]) });
  }
  return out;
}

/**
 * Allocation requests of a multi-provider group: per anchor tree, every combination of
 * one provider per class whose providers have, together, all required traits and none
 * of them a forbidden one.
 */
export function multipleProviderCandidates(ctx: WideContext, g: GroupContext): AllocationRequest[] {
  const trees = treesMatchingAll(ctx, g);
  const out: AllocationRequest[] = [];
  for (const [root, byRc] of trees) {
    ctx.summarizedRoots.add(root);
    for (const ids of byRc.values()) ids.forEach((id) => ctx.summarizedRoots.add(id));
  }
  for (const [root, byRc] of trees) out.push(...treeRequests(ctx, g, root, byRc));
  return out;
}
