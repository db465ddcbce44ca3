/**
 * gRPC GetAllocationCandidates <-> the candidates domain. The request is turned into the
 * equivalent GET /allocation_candidates query at microversion 1.39, so both APIs share
 * one validation with the same rules and messages; the answer carries 1.39's content
 * (mappings, all resources, traits, parent/root) plus name, generation and aggregates.
 */
import type {
  AllocationCandidate,
  GetAllocationCandidatesRequest,
  GetAllocationCandidatesResponse,
  ProviderSummary,
  RequestGroup as WireGroup,
} from '@cellsched/wire';
import { summaryCapacity } from '../../domain/candidates/capacity';
import type { QueryPairs } from '../../domain/candidates/query-parser';
import type { AllocationRequest, CandidateResult, CandidateSnapshot, ProviderNode } from '../../domain/candidates/types';

/** The microversion whose semantics the gRPC API follows. */
export const GRPC_CANDIDATES_MINOR = 39;

function groupPairs(g: WireGroup): [string, string][] {
  const s = g.suffix;
  const out: [string, string][] = [];
  const resources = Object.entries(g.resources).map(([rc, n]) => `${rc}:${n}`);
  if (resources.length > 0) out.push([`resources${s}`, resources.join(',')]);
  for (const r of g.required) out.push([`required${s}`, r]);
  if (g.forbidden.length > 0) out.push([`required${s}`, g.forbidden.map((t) => `!${t}`).join(',')]);
  for (const m of g.memberOf) out.push([`member_of${s}`, m]);
  if (g.forbiddenMemberOf.length > 0) out.push([`member_of${s}`, `!in:${g.forbiddenMemberOf.join(',')}`]);
  if (g.inTree !== '') out.push([`in_tree${s}`, g.inTree]);
  return out;
}

/** The query string pairs equivalent to a gRPC request. */
export function requestToQuery(req: GetAllocationCandidatesRequest): QueryPairs {
  const out: [string, string][] = req.groups.flatMap(groupPairs);
  if (req.groupPolicy !== '') out.push(['group_policy', req.groupPolicy]);
  if (req.limit !== 0) out.push(['limit', String(req.limit)]);
  const root = [...req.rootRequired, ...req.rootForbidden.map((t) => `!${t}`)];
  if (root.length > 0) out.push(['root_required', root.join(',')]);
  for (const st of req.sameSubtree) out.push(['same_subtree', st]);
  return out;
}

function candidate(snap: CandidateSnapshot, a: AllocationRequest): AllocationCandidate {
  const byProvider = new Map<string, Record<string, number>>();
  for (const r of a.resources) {
    const uuid = snap.providers.get(r.providerId)?.uuid ?? '';
    const res = byProvider.get(uuid) ?? {};
    res[snap.resourceClassNameById.get(r.resourceClassId) ?? ''] = r.amount;
    byProvider.set(uuid, res);
  }
  const mappings: AllocationCandidate['mappings'] = {};
  for (const [suffix, ids] of a.mappings) mappings[suffix] = { providerUuids: [...ids].map((id) => snap.providers.get(id)?.uuid ?? '') };
  return { allocations: [...byProvider].map(([resourceProviderUuid, resources]) => ({ resourceProviderUuid, resources })), mappings };
}

function summary(snap: CandidateSnapshot, p: ProviderNode): ProviderSummary {
  const resources: ProviderSummary['resources'] = {};
  for (const [rcId, inv] of p.inventories)
    resources[snap.resourceClassNameById.get(rcId) ?? ''] = { capacity: summaryCapacity(inv), used: inv.used };
  return {
    uuid: p.uuid,
    name: p.name,
    rootProviderUuid: snap.providers.get(p.rootId)?.uuid ?? '',
    parentProviderUuid: p.parentId === null ? '' : (snap.providers.get(p.parentId)?.uuid ?? ''),
    resources,
    traits: [...p.traits].map((t) => snap.traitNameById.get(t) ?? ''),
    generation: p.generation,
    aggregates: [...p.aggregates].map((a) => snap.aggregateUuidById.get(a) ?? ''),
  };
}

/**
 * Summaries per name tables and node: both immutable and shared by successive snapshots
 * while unchanged (a node's uuid, parent and root never change without the node itself
 * being replaced), so a new snapshot rebuilds only the summaries of changed providers.
 * One per gRPC service (placementHandlers makes it), never module-level.
 */
export class ProviderSummaries {
  private readonly byNames = new WeakMap<ReadonlyMap<number, string>, WeakMap<ProviderNode, ProviderSummary>>();

  /** The summary of `p` in `snap`, built on first use. */
  of(snap: CandidateSnapshot, p: ProviderNode): ProviderSummary {
    let perNames = this.byNames.get(snap.resourceClassNameById);
    if (!perNames) this.byNames.set(snap.resourceClassNameById, (perNames = new WeakMap()));
    let s = perNames.get(p);
    if (!s) perNames.set(p, (s = summary(snap, p)));
    return s;
  }
}

/** The gRPC answer of a search. */
export function resultToResponse(
  snap: CandidateSnapshot,
  result: CandidateResult,
  summaries: ProviderSummaries,
): GetAllocationCandidatesResponse {
  const providerSummaries: GetAllocationCandidatesResponse['providerSummaries'] = {};
  for (const id of result.summaryProviderIds) {
    const p = snap.providers.get(id);
    if (p) providerSummaries[p.uuid] = summaries.of(snap, p);
  }
  return { allocationRequests: result.allocationRequests.map((a) => candidate(snap, a)), providerSummaries };
}
