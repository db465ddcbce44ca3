/**
 * GET /allocation_candidates (microversions 1.10 - 1.39): parse and validate the query
 * with Placement's rules and messages, search, and answer the body in the shape of the
 * requested microversion.
 */
import { CandidateQueryError } from '../../domain/candidates/errors';
import { parseCandidateQuery, type QueryPairs } from '../../domain/candidates/query-parser';
import { renderCandidatesJson } from '../../domain/candidates/render-json';
import { badRequest } from '../../domain/errors';
import { findAllocationCandidates } from '../../domain/candidates/search';
import type { CandidateSnapshot } from '../../domain/candidates/types';
import { cacheHeaders, type PlacementReply, type PlacementRequest } from './kit';

function pairs(req: PlacementRequest): QueryPairs {
  const out: [string, string][] = [];
  for (const [k, values] of req.query) for (const v of values) out.push([k, v]);
  return out;
}

/** The handler of GET /allocation_candidates; 400 with Placement's text on a bad query. */
export async function listAllocationCandidates(req: PlacementRequest): Promise<PlacementReply> {
  const minor = req.version.major > 1 ? 39 : req.version.minor;
  try {
    const query = pairs(req);
    const { groups, params } = parseCandidateQuery(query, minor);
    const snapshot = await req.snapshots.get();
    const rawJson = req.candidateBodies.answer(snapshot, `${minor}?${new URLSearchParams(query as [string, string][]).toString()}`, () => {
      const result = findAllocationCandidates(snapshot, groups, params);
      return renderCandidatesJson(
        snapshot,
        result,
        minor,
        new Set(groups.flatMap((g) => [...g.resources.keys()])),
        req.candidateBodies.memos,
      );
    });
    return { status: 200, rawJson, headers: cacheHeaders(req, new Date()) };
  } catch (err) {
    if (err instanceof CandidateQueryError) throw badRequest(err.message, err.code);
    throw err;
  }
}
