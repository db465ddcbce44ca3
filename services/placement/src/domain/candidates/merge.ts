/**
 * Folding the per-group allocation requests into requests that satisfy every group
 * (Placement's _merge_candidates): same anchor, group_policy, same_subtree, amounts of
 * the same class from the same provider summed and re-checked against capacity.
 */
import { mergedAmountFits } from './capacity';
import type { AllocationRequest, CandidateSnapshot, ResourceRequest } from './types';
import type { WideContext } from './wide-context';

function satisfiesIsolate(areqs: readonly AllocationRequest[], numGranular: number): boolean {
  const providers = new Set<number>();
  for (const a of areqs) {
    if (!a.useSameProvider) continue;
    const first = a.mappings.values().next().value;
    first?.forEach((id) => providers.add(id));
  }
  return providers.size === numGranular;
}

function ancestors(snap: CandidateSnapshot, id: number): Set<number> {
  const out = new Set<number>();
  let cur: number | null = id;
  while (cur !== null) {
    out.add(cur);
    cur = snap.providers.get(cur)?.parentId ?? null;
  }
  return out;
}

/** True when one of the providers is an ancestor (or self) of all the others. */
function inSameSubtree(snap: CandidateSnapshot, ids: ReadonlySet<number>): boolean {
  if (ids.size <= 1) return true;
  const lists = [...ids].map((id) => ancestors(snap, id));
  const [first, ...rest] = lists as [Set<number>, ...Set<number>[]];
  const common = [...first].filter((x) => rest.every((anc) => anc.has(x)));
  return common.some((x) => ids.has(x));
}

function satisfiesSameSubtree(ctx: WideContext, areqs: readonly AllocationRequest[]): boolean {
  for (const suffixes of ctx.params.sameSubtrees) {
    const ids = new Set<number>();
    for (const a of areqs) for (const s of suffixes) a.mappings.get(s)?.forEach((id) => ids.add(id));
    if (!inSameSubtree(ctx.snap, ids)) return false;
  }
  return true;
}

/** Sums amounts per (provider, class); null when the sum exceeds capacity or max_unit. */
function consolidate(ctx: WideContext, areqs: readonly AllocationRequest[]): AllocationRequest | null {
  const byKey = new Map<string, ResourceRequest>();
  const mappings = new Map<string, Set<number>>();
  for (const a of areqs) {
    for (const r of a.resources) {
      const key = `${r.providerId}:${r.resourceClassId}`;
      const prev = byKey.get(key);
      if (prev) prev.amount += r.amount;
      else byKey.set(key, { providerId: r.providerId, resourceClassId: r.resourceClassId, amount: r.amount });
    }
    for (const [suffix, ids] of a.mappings) {
      const set = mappings.get(suffix) ?? new Set<number>();
      ids.forEach((id) => set.add(id));
      mappings.set(suffix, set);
    }
  }
  const resources = [...byKey.values()];
  if (areqs.length > 1) {
    for (const r of resources) {
      const inv = ctx.snap.providers.get(r.providerId)?.inventories.get(r.resourceClassId);
      if (!inv || !mergedAmountFits(inv, r.amount)) return null;
    }
  }
  const first = areqs[0] as AllocationRequest;
  return { anchorRootId: first.anchorRootId, useSameProvider: false, resources, mappings };
}

function identity(a: AllocationRequest): string {
  const res = a.resources
    .map((r) => `${r.providerId}:${r.resourceClassId}:${r.amount}`)
    .sort()
    .join(',');
  const maps = [...a.mappings]
    .map(([s, ids]) => `${s}=${[...ids].sort((x, y) => x - y).join('.')}`)
    .sort()
    .join(';');
  return `${res}|${maps}`;
}

function* combinations(lists: readonly (readonly AllocationRequest[])[], prefix: AllocationRequest[] = []): Generator<AllocationRequest[]> {
  if (prefix.length === lists.length) {
    yield prefix;
    return;
  }
  for (const a of lists[prefix.length] ?? []) yield* combinations(lists, [...prefix, a]);
}

function byAnchor(candidates: ReadonlyMap<string, readonly AllocationRequest[]>): Map<number, Map<string, AllocationRequest[]>> {
  const out = new Map<number, Map<string, AllocationRequest[]>>();
  for (const [suffix, areqs] of candidates) {
    for (const a of areqs) {
      let bySuffix = out.get(a.anchorRootId);
      if (!bySuffix) out.set(a.anchorRootId, (bySuffix = new Map()));
      const list = bySuffix.get(suffix);
      if (list) list.push(a);
      else bySuffix.set(suffix, [a]);
    }
  }
  return out;
}

/**
 * One group: its requests already hold one amount per (provider, class) within capacity;
 * only copies of a sharing provider's request anchored in several trees can repeat.
 */
function singleGroup(ctx: WideContext, areqs: readonly AllocationRequest[]): AllocationRequest[] {
  if (ctx.sharing.size === 0) return [...areqs];
  const seen = new Set<string>();
  return areqs.filter((a) => {
    const key = identity(a);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Every combination of one request per group sharing an anchor, filtered by
 * group_policy and same_subtree, consolidated and capacity-checked, without duplicates.
 */
export function mergeCandidates(ctx: WideContext, candidates: ReadonlyMap<string, readonly AllocationRequest[]>): AllocationRequest[] {
  const suffixes = [...candidates.keys()];
  if (suffixes.length === 1) return singleGroup(ctx, candidates.values().next().value ?? []);
  const numGranular = suffixes.filter((s) => s !== '').length;
  const isolate = ctx.params.groupPolicy === 'isolate';
  const seen = new Set<string>();
  const out: AllocationRequest[] = [];
  for (const bySuffix of byAnchor(candidates).values()) {
    if (bySuffix.size !== suffixes.length) continue;
    const lists = suffixes.map((s) => bySuffix.get(s) ?? []);
    for (const combo of combinations(lists)) {
      if (isolate && !satisfiesIsolate(combo, numGranular)) continue;
      if (!satisfiesSameSubtree(ctx, combo)) continue;
      const merged = consolidate(ctx, combo);
      if (merged === null) continue;
      const key = identity(merged);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(merged);
    }
  }
  return out;
}
