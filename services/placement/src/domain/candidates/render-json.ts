/**
 * The JSON body of GET /allocation_candidates in Placement's shape for a microversion,
 * written straight to a string (10,000 candidates are megabytes: no intermediate objects).
 * Every string written is a uuid, a resource class, trait or suffix name, none of which
 * needs JSON escaping, but all go through `JSON.stringify` once per distinct value.
 */
import { summaryCapacity } from './capacity';
import type { AllocationRequest, CandidateResult, CandidateSnapshot } from './types';

class Names {
  private readonly cache = new Map<string, string>();
  quote(s: string): string {
    let q = this.cache.get(s);
    if (q === undefined) this.cache.set(s, (q = JSON.stringify(s)));
    return q;
  }
}

function byProvider(a: AllocationRequest): Map<number, [number, number][]> {
  const out = new Map<number, [number, number][]>();
  for (const r of a.resources) {
    const list = out.get(r.providerId);
    if (list) list.push([r.resourceClassId, r.amount]);
    else out.set(r.providerId, [[r.resourceClassId, r.amount]]);
  }
  return out;
}

function renderRequest(snap: CandidateSnapshot, a: AllocationRequest, minor: number, n: Names): string {
  const uuid = (id: number): string => n.quote(snap.providers.get(id)?.uuid ?? '');
  const rc = (id: number): string => n.quote(snap.resourceClassNameById.get(id) ?? '');
  const res = (list: [number, number][]): string => `{${list.map(([c, amt]) => `${rc(c)}:${amt}`).join(',')}}`;
  const groups = [...byProvider(a)];
  if (minor < 12) {
    const items = groups.map(([id, list]) => `{"resource_provider":{"uuid":${uuid(id)}},"resources":${res(list)}}`);
    return `{"allocations":[${items.join(',')}]}`;
  }
  const allocs = groups.map(([id, list]) => `${uuid(id)}:{"resources":${res(list)}}`).join(',');
  if (minor < 34) return `{"allocations":{${allocs}}}`;
  const maps = [...a.mappings].map(([s, ids]) => `${n.quote(s)}:[${[...ids].map(uuid).join(',')}]`).join(',');
  return `{"allocations":{${allocs}},"mappings":{${maps}}}`;
}

function renderSummary(snap: CandidateSnapshot, id: number, minor: number, requested: ReadonlySet<string>, n: Names): string {
  const p = snap.providers.get(id);
  if (!p) return '';
  const parts: string[] = [];
  for (const [rcId, inv] of p.inventories) {
    const name = snap.resourceClassNameById.get(rcId) ?? '';
    if (minor < 27 && !requested.has(name)) continue;
    parts.push(`${n.quote(name)}:{"capacity":${summaryCapacity(inv)},"used":${inv.used}}`);
  }
  let body = `"resources":{${parts.join(',')}}`;
  if (minor >= 17) {
    // NOTE: in the database's order, as Placement lists them (clients compare lists).
    const traits = [...p.traits].map((t) => snap.traitNameById.get(t) ?? '');
    body += `,"traits":[${traits.map((t) => n.quote(t)).join(',')}]`;
  }
  if (minor >= 29) {
    const parent = p.parentId === null ? 'null' : n.quote(snap.providers.get(p.parentId)?.uuid ?? '');
    body += `,"parent_provider_uuid":${parent},"root_provider_uuid":${n.quote(snap.providers.get(p.rootId)?.uuid ?? '')}`;
  }
  return `${n.quote(p.uuid)}:{${body}}`;
}

/**
 * Renders `{"allocation_requests": [...], "provider_summaries": {...}}` at microversion
 * 1.`minor`. `requested` is every resource class named in the query (summaries before
 * 1.27 list only those).
 */
export function renderCandidatesJson(snap: CandidateSnapshot, result: CandidateResult, minor: number, requested: ReadonlySet<string>): string {
  const n = new Names();
  const areqs = result.allocationRequests.map((a) => renderRequest(snap, a, minor, n));
  const sums = result.summaryProviderIds.map((id) => renderSummary(snap, id, minor, requested, n));
  return `{"allocation_requests":[${areqs.join(',')}],"provider_summaries":{${sums.join(',')}}}`;
}
