/**
 * The allocation-candidates search over one snapshot (Placement's
 * AllocationCandidates.get_by_requests): per-group candidates, merge, old-microversion
 * nested exclusion, limit. Pure: same snapshot and request, same answer.
 */
import { NoCandidates } from './errors';
import { buildGroupContext } from './group-context';
import { mergeCandidates } from './merge';
import { multipleProviderCandidates } from './multiple-providers';
import { providersMatchingGroup, requestFor, singleProviderCandidates } from './single-provider';
import type { AllocationRequest, CandidateResult, CandidateSnapshot, RequestGroup, RequestWideParams } from './types';
import { nonRootProviders } from './snapshot-index';
import { buildWideContext, inFilteredAnchors, type WideContext } from './wide-context';

/** Options of one search beyond the query itself. */
export interface SearchOptions {
  /** When set, candidates are shuffled with this seed before `limit` applies. */
  readonly seed?: number;
  /** Always take the general path (tests compare it with the shortcut). */
  readonly general?: boolean;
}

function groupCandidates(ctx: WideContext, group: RequestGroup): AllocationRequest[] {
  const g = buildGroupContext(ctx.snap, group);
  if (!group.useSameProvider && (ctx.sharing.size > 0 || ctx.snap.hasTrees)) return multipleProviderCandidates(ctx, g);
  return singleProviderCandidates(ctx, g);
}

/** Providers to summarize: every provider of the summarized trees the requests touch. */
function summaryProviders(ctx: WideContext, areqs: readonly AllocationRequest[]): number[] {
  const roots = new Set<number>();
  for (const a of areqs) {
    for (const r of a.resources) {
      const root = ctx.snap.providers.get(r.providerId)?.rootId;
      if (root !== undefined && ctx.summarizedRoots.has(root)) roots.add(root);
    }
  }
  const out: number[] = [];
  for (const p of ctx.snap.providers.values()) if (roots.has(p.rootId)) out.push(p.id);
  return out;
}

/** Before 1.29: drop requests taking from two providers of one tree; summarize only used providers. */
function excludeNested(ctx: WideContext, areqs: AllocationRequest[], summaries: number[]): [AllocationRequest[], number[]] {
  if (ctx.params.nestedAware || !ctx.snap.hasTrees) return [areqs, summaries];
  const used = new Set<number>();
  const kept = areqs.filter((a) => {
    const providers = new Set(a.resources.map((r) => r.providerId));
    const roots = new Set([...providers].map((id) => ctx.snap.providers.get(id)?.rootId));
    if (providers.size !== roots.size) return false;
    providers.forEach((id) => used.add(id));
    return true;
  });
  return [kept, summaries.filter((id) => used.has(id))];
}

function shuffle<T>(items: T[], seed: number): void {
  let state = seed >>> 0 || 1;
  for (let i = items.length - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}

function applyLimit(ctx: WideContext, areqs: AllocationRequest[], summaries: number[], opts: SearchOptions): CandidateResult {
  if (opts.seed !== undefined && opts.seed !== 0) shuffle(areqs, opts.seed);
  const limit = ctx.params.limit;
  if (!limit || limit >= areqs.length) return { allocationRequests: areqs, summaryProviderIds: summaries };
  const kept = areqs.slice(0, limit);
  const roots = new Set<number>();
  for (const a of kept) for (const r of a.resources) roots.add(ctx.snap.providers.get(r.providerId)?.rootId ?? -1);
  const keptSummaries = summaries.filter((id) => roots.has(ctx.snap.providers.get(id)?.rootId ?? -2));
  return { allocationRequests: kept, summaryProviderIds: keptSummaries };
}

/**
 * The common case (one group, each candidate one provider, no sharing provider) without
 * building a request per match: exactly what the general path answers (one request per
 * matching provider in id order, merged as is, the same shuffle, limit and summaries),
 * but only the kept requests are built. At 10,000 providers the general path allocates
 * 10,000 requests to keep `limit` of them.
 */
function singleProviderOnly(ctx: WideContext, group: RequestGroup, opts: SearchOptions): CandidateResult {
  const g = buildGroupContext(ctx.snap, group);
  const matches = providersMatchingGroup(ctx, g).filter((p) => inFilteredAnchors(ctx, p.rootId));
  if (matches.length === 0) return { allocationRequests: [], summaryProviderIds: [] };
  // NOTE: before 1.29 with trees, only providers used by some request are summarized.
  const usedOnly = !ctx.params.nestedAware && ctx.snap.hasTrees ? new Set(matches.map((p) => p.id)) : null;
  if (opts.seed !== undefined && opts.seed !== 0) shuffle(matches, opts.seed);
  const limit = ctx.params.limit;
  const kept = !limit || limit >= matches.length ? matches : matches.slice(0, limit);
  const roots = new Set(kept.map((p) => p.rootId));
  // NOTE: the providers of those trees: the roots themselves and the tree members whose
  // root is one of them (no scan of every provider).
  const inTrees: number[] = [];
  for (const r of roots) if (ctx.snap.providers.get(r)?.rootId === r) inTrees.push(r);
  for (const id of nonRootProviders(ctx.snap)) if (roots.has(ctx.snap.providers.get(id)?.rootId ?? -1)) inTrees.push(id);
  inTrees.sort((a, b) => a - b);
  const summaryProviderIds = usedOnly === null ? inTrees : inTrees.filter((id) => usedOnly.has(id));
  return { allocationRequests: kept.map((p) => requestFor(g, p, p.rootId)), summaryProviderIds };
}

/** Whether `singleProviderOnly` answers the request. */
function isSingleProviderOnly(ctx: WideContext, groups: readonly RequestGroup[]): boolean {
  const group = groups[0];
  // NOTE: a resourceless group's requests name no provider, so summaries differ: general path.
  return (
    groups.length === 1 &&
    group !== undefined &&
    group.resources.size > 0 &&
    ctx.sharing.size === 0 &&
    (group.useSameProvider || !ctx.snap.hasTrees)
  );
}

/**
 * Runs the search. Throws CandidateQueryError for an unknown resource class or trait
 * (HTTP 400); answers an empty result when nothing matches.
 */
export function findAllocationCandidates(
  snap: CandidateSnapshot,
  groups: readonly RequestGroup[],
  params: RequestWideParams,
  opts: SearchOptions = {},
): CandidateResult {
  try {
    const ctx = buildWideContext(snap, params);
    if (!opts.general && isSingleProviderOnly(ctx, groups)) return singleProviderOnly(ctx, groups[0] as RequestGroup, opts);
    const candidates = new Map<string, AllocationRequest[]>();
    for (const group of groups) {
      const areqs = groupCandidates(ctx, group);
      if (areqs.length === 0) return { allocationRequests: [], summaryProviderIds: [] };
      candidates.set(group.suffix, areqs);
    }
    const merged = mergeCandidates(ctx, candidates);
    if (merged.length === 0) return { allocationRequests: [], summaryProviderIds: [] };
    const [areqs, summaries] = excludeNested(ctx, merged, summaryProviders(ctx, merged));
    return applyLimit(ctx, areqs, summaries, opts);
  } catch (err) {
    if (err instanceof NoCandidates) return { allocationRequests: [], summaryProviderIds: [] };
    throw err;
  }
}
