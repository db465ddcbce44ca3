/**
 * GET /allocation_candidates (microversions 1.10 - 1.39): parse and validate the query
 * with Placement's rules and messages, search, and answer the body in the shape of the
 * requested microversion.
 */
import { CandidateQueryError } from '../../domain/candidates/errors';
import { parseCandidateQuery, type QueryPairs } from '../../domain/candidates/query-parser';
import { renderCandidatesJson } from '../../domain/candidates/render-json';
import { badRequest } from '../../domain/errors';
import { queryAllocationCandidates } from '../sql/candidates-query';
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
    const { groups, params } = parseCandidateQuery(pairs(req), minor);
    const { snapshot, result } = await queryAllocationCandidates(req.pool, groups, params);
    const requested = new Set(groups.flatMap((g) => [...g.resources.keys()]));
    const rawJson = renderCandidatesJson(snapshot, result, minor, requested);
    return { status: 200, rawJson, headers: cacheHeaders(req, new Date()) };
  } catch (err) {
    if (err instanceof CandidateQueryError) throw badRequest(err.message, err.code);
    throw err;
  }
}
