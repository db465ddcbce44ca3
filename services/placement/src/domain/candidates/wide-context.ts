/**
 * Request-wide search state (Placement's RequestWideSearchContext): anchor filtering from
 * root_required, sharing providers and their anchors, and which trees get summaries.
 */
import { NoCandidates } from './errors';
import { traitIds } from './group-context';
import { traitMembers } from './snapshot-index';
import type { CandidateSnapshot, ProviderNode, RequestWideParams } from './types';

/** The trait that marks a provider as sharing its inventory through its aggregates. */
export const MISC_SHARES_VIA_AGGREGATE = 'MISC_SHARES_VIA_AGGREGATE';

/** Mutable per-search state; one per search, never shared. */
export interface WideContext {
  readonly snap: CandidateSnapshot;
  readonly params: RequestWideParams;
  /** Roots allowed by root_required; null when not filtering. */
  readonly anchorRootIds: ReadonlySet<number> | null;
  /** Providers having MISC_SHARES_VIA_AGGREGATE. */
  readonly sharing: ReadonlySet<number>;
  /** Ids passed to Placement's `_build_provider_summaries`: trees rooted there are summarized. */
  readonly summarizedRoots: Set<number>;
  /** Lazily built aggregate id -> member providers. */
  membersByAggregate: Map<number, ProviderNode[]> | null;
}

function rootsWithTraits(snap: CandidateSnapshot, required: number[], forbidden: number[]): Set<number> {
  const roots = new Set<number>();
  for (const p of snap.providers.values()) {
    if (p.parentId !== null) continue;
    if (required.every((t) => p.traits.has(t)) && !forbidden.some((t) => p.traits.has(t))) roots.add(p.id);
  }
  return roots;
}

/** Builds the request-wide context; throws CandidateQueryError for unknown root traits. */
export function buildWideContext(snap: CandidateSnapshot, params: RequestWideParams): WideContext {
  let anchorRootIds: Set<number> | null = null;
  if (params.rootRequired.length > 0 || params.rootForbidden.length > 0) {
    anchorRootIds = rootsWithTraits(snap, traitIds(snap, params.rootRequired), traitIds(snap, params.rootForbidden));
    if (anchorRootIds.size === 0) throw new NoCandidates();
  }
  const shareTrait = snap.traitIdByName.get(MISC_SHARES_VIA_AGGREGATE);
  const sharing = new Set<number>(shareTrait === undefined ? [] : traitMembers(snap, shareTrait));
  return { snap, params, anchorRootIds, sharing, summarizedRoots: new Set(), membersByAggregate: null };
}

/** Whether a root may anchor a candidate (always, when root_required is absent). */
export function inFilteredAnchors(ctx: WideContext, rootId: number): boolean {
  return ctx.anchorRootIds === null || ctx.anchorRootIds.has(rootId);
}

function membersByAggregate(ctx: WideContext): Map<number, ProviderNode[]> {
  if (ctx.membersByAggregate) return ctx.membersByAggregate;
  const index = new Map<number, ProviderNode[]>();
  for (const p of ctx.snap.providers.values()) {
    for (const agg of p.aggregates) {
      const list = index.get(agg);
      if (list) list.push(p);
      else index.set(agg, [p]);
    }
  }
  ctx.membersByAggregate = index;
  return index;
}

/**
 * The roots that a sharing provider can anchor: roots of every provider sharing an
 * aggregate with it (its own root included when it is in any aggregate).
 */
export function anchorsForSharingProvider(ctx: WideContext, sharingId: number): Set<number> {
  const index = membersByAggregate(ctx);
  const roots = new Set<number>();
  const sharing = ctx.snap.providers.get(sharingId);
  if (!sharing) return roots;
  for (const agg of sharing.aggregates) {
    for (const member of index.get(agg) ?? []) roots.add(member.rootId);
  }
  return roots;
}
