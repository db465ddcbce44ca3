/**
 * Helpers of the allocation-candidates functional tests: run a query string through the
 * same path as GET /allocation_candidates and describe the answer by provider names.
 */
import type { Pool } from 'pg';
import { parseCandidateQuery } from '../../src/domain/candidates/query-parser';
import { renderCandidatesJson, RenderMemos } from '../../src/domain/candidates/render-json';
import { queryAllocationCandidates } from '../../src/adapters/sql/candidates-query';
import { CandidateSnapshotCache } from '../../src/adapters/sql/candidates-snapshot';

export interface CandidatesBody {
  allocation_requests: { allocations: Record<string, { resources: Record<string, number> }>; mappings?: Record<string, string[]> }[];
  provider_summaries: Record<
    string,
    {
      resources: Record<string, { capacity: number; used: number }>;
      traits?: string[];
      parent_provider_uuid?: string | null;
      root_provider_uuid?: string;
    }
  >;
}

/** Runs `query` at microversion 1.`minor` and parses the JSON body. */
export async function ask(pool: Pool, query: string, minor = 39): Promise<CandidatesBody> {
  const pairs = [...new URLSearchParams(query)];
  const { groups, params } = parseCandidateQuery(pairs, minor);
  const { snapshot, result } = await queryAllocationCandidates(new CandidateSnapshotCache(pool), groups, params);
  const requested = new Set(groups.flatMap((g) => [...g.resources.keys()]));
  return JSON.parse(renderCandidatesJson(snapshot, result, minor, requested, new RenderMemos())) as CandidatesBody;
}

/** Each candidate as a sorted "name:CLASS=amount" list joined by " + ", all sorted. */
export function describe_(body: CandidatesBody, names: ReadonlyMap<string, string>): string[] {
  return body.allocation_requests
    .map((ar) => {
      const parts: string[] = [];
      for (const [uuid, { resources }] of Object.entries(ar.allocations)) {
        for (const [rc, amt] of Object.entries(resources)) parts.push(`${names.get(uuid) ?? uuid}:${rc}=${amt}`);
      }
      return parts.sort().join(' + ');
    })
    .sort();
}

/** Names of the providers that have a summary, sorted. */
export function summarized(body: CandidatesBody, names: ReadonlyMap<string, string>): string[] {
  return Object.keys(body.provider_summaries)
    .map((u) => names.get(u) ?? u)
    .sort();
}
