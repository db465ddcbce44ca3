/**
 * The JSON body of GET /allocation_candidates in Placement's shape for a microversion,
 * written straight to a string (10,000 candidates are megabytes: no intermediate objects).
 * Quoted uuids and names, and whole provider summaries, are memoized per provider node
 * and name tables: both are immutable and shared by successive snapshots while unchanged.
 */
import { summaryCapacity } from './capacity';
import type { AllocationRequest, CandidateResult, CandidateSnapshot, ProviderNode, ResourceRequest } from './types';

interface RenderMemo {
  /** Quoted uuid per node (a node's uuid never changes; its parent's and root's neither). */
  readonly uuid: WeakMap<ProviderNode, string>;
  readonly rc: Map<number, string>;
  readonly trait: Map<number, string>;
  /** summary variant key -> node -> `"uuid":{...}` */
  readonly summaries: Map<string, WeakMap<ProviderNode, string>>;
}

/**
 * The renderer's memos, per name tables: successive snapshots share the name maps (and every
 * unchanged node object) until a name changes, so a snapshot that differs from the previous one
 * by a few providers re-renders only those. One per app (buildApp makes it), never module-level;
 * memos of name tables no longer referenced are dropped with them.
 */
export class RenderMemos {
  private readonly byNames = new WeakMap<ReadonlyMap<number, string>, RenderMemo>();

  /** The memo of `snap`'s name tables, made on first use. */
  of(snap: CandidateSnapshot): RenderMemo {
    let m = this.byNames.get(snap.resourceClassNameById);
    if (!m)
      this.byNames.set(snap.resourceClassNameById, (m = { uuid: new WeakMap(), rc: new Map(), trait: new Map(), summaries: new Map() }));
    return m;
  }
}

function quoted(cache: Map<number, string>, id: number, raw: string | undefined): string {
  let q = cache.get(id);
  if (q === undefined) cache.set(id, (q = JSON.stringify(raw ?? '')));
  return q;
}

function uuidOf(snap: CandidateSnapshot, m: RenderMemo, id: number): string {
  const node = snap.providers.get(id);
  if (!node) return '""';
  let q = m.uuid.get(node);
  if (q === undefined) m.uuid.set(node, (q = JSON.stringify(node.uuid)));
  return q;
}

function rcOf(snap: CandidateSnapshot, m: RenderMemo, id: number): string {
  return quoted(m.rc, id, snap.resourceClassNameById.get(id));
}

/** Resources of one request grouped by provider, providers in first-use order. */
function groupByProvider(resources: readonly ResourceRequest[]): ResourceRequest[][] {
  const groups: ResourceRequest[][] = [];
  for (const r of resources) {
    const g = groups.find((x) => (x[0] as ResourceRequest).providerId === r.providerId);
    if (g) g.push(r);
    else groups.push([r]);
  }
  return groups;
}

function resourcesJson(snap: CandidateSnapshot, m: RenderMemo, list: readonly ResourceRequest[]): string {
  let s = '{';
  for (let i = 0; i < list.length; i++) {
    const r = list[i] as ResourceRequest;
    s += `${i > 0 ? ',' : ''}${rcOf(snap, m, r.resourceClassId)}:${r.amount}`;
  }
  return `${s}}`;
}

function renderRequest(snap: CandidateSnapshot, m: RenderMemo, a: AllocationRequest, minor: number): string {
  const groups = groupByProvider(a.resources);
  const parts: string[] = [];
  for (const g of groups) {
    const id = (g[0] as ResourceRequest).providerId;
    const res = resourcesJson(snap, m, g);
    parts.push(
      minor < 12
        ? `{"resource_provider":{"uuid":${uuidOf(snap, m, id)}},"resources":${res}}`
        : `${uuidOf(snap, m, id)}:{"resources":${res}}`,
    );
  }
  if (minor < 12) return `{"allocations":[${parts.join(',')}]}`;
  if (minor < 34) return `{"allocations":{${parts.join(',')}}}`;
  const maps: string[] = [];
  for (const [suffix, ids] of a.mappings) maps.push(`${JSON.stringify(suffix)}:[${[...ids].map((id) => uuidOf(snap, m, id)).join(',')}]`);
  return `{"allocations":{${parts.join(',')}},"mappings":{${maps.join(',')}}}`;
}

function renderSummary(snap: CandidateSnapshot, m: RenderMemo, p: ProviderNode, minor: number, requested: ReadonlySet<string>): string {
  const parts: string[] = [];
  for (const [rcId, inv] of p.inventories) {
    if (minor < 27 && !requested.has(snap.resourceClassNameById.get(rcId) ?? '')) continue;
    parts.push(`${rcOf(snap, m, rcId)}:{"capacity":${summaryCapacity(inv)},"used":${inv.used}}`);
  }
  let body = `"resources":{${parts.join(',')}}`;
  if (minor >= 17) {
    // NOTE: in the database's order, as Placement lists them (clients compare lists).
    const traits = [...p.traits].map((t) => quoted(m.trait, t, snap.traitNameById.get(t)));
    body += `,"traits":[${traits.join(',')}]`;
  }
  if (minor >= 29) {
    const parent = p.parentId === null ? 'null' : uuidOf(snap, m, p.parentId);
    body += `,"parent_provider_uuid":${parent},"root_provider_uuid":${uuidOf(snap, m, p.rootId)}`;
  }
  return `${uuidOf(snap, m, p.id)}:{${body}}`;
}

function summaryVariant(minor: number, requested: ReadonlySet<string>): string {
  const shape = minor < 17 ? 'a' : minor < 27 ? 'b' : minor < 29 ? 'c' : 'd';
  return minor < 27 ? `${shape}:${[...requested].sort().join(',')}` : shape;
}

/**
 * Renders `{"allocation_requests": [...], "provider_summaries": {...}}` at microversion
 * 1.`minor`. `requested` is every resource class named in the query (summaries before
 * 1.27 list only those).
 */
export function renderCandidatesJson(
  snap: CandidateSnapshot,
  result: CandidateResult,
  minor: number,
  requested: ReadonlySet<string>,
  memos: RenderMemos,
): string {
  const m = memos.of(snap);
  const variant = summaryVariant(minor, requested);
  let sums = m.summaries.get(variant);
  if (!sums) m.summaries.set(variant, (sums = new WeakMap()));
  const areqs: string[] = result.allocationRequests.map((a) => renderRequest(snap, m, a, minor));
  const summaries: string[] = [];
  for (const id of result.summaryProviderIds) {
    const p = snap.providers.get(id);
    if (!p) continue;
    let s = sums.get(p);
    if (s === undefined) sums.set(p, (s = renderSummary(snap, m, p, minor, requested)));
    summaries.push(s);
  }
  return `{"allocation_requests":[${areqs.join(',')}],"provider_summaries":{${summaries.join(',')}}}`;
}
