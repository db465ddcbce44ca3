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

const MAX_BODIES_PER_SNAPSHOT = 16;
const MAX_CACHED_BODY = 16 * 1024 * 1024;
/**
 * Rendered bodies per snapshot, keyed by microversion and query. A snapshot is immutable
 * and the search pure, so an identical query on an unchanged database has an identical
 * answer; any committed change makes a new snapshot and drops these with the old one.
 */
const bodies = new WeakMap<CandidateSnapshot, Map<string, string>>();

function answer(snapshot: CandidateSnapshot, key: string, render: () => string): string {
  let perSnapshot = bodies.get(snapshot);
  if (!perSnapshot) bodies.set(snapshot, (perSnapshot = new Map()));
  const hit = perSnapshot.get(key);
  if (hit !== undefined) return hit;
  const body = render();
  if (body.length <= MAX_CACHED_BODY && perSnapshot.size < MAX_BODIES_PER_SNAPSHOT) perSnapshot.set(key, body);
  return body;
}

/** The handler of GET /allocation_candidates; 400 with Placement's text on a bad query. */
export async function listAllocationCandidates(req: PlacementRequest): Promise<PlacementReply> {
  const minor = req.version.major > 1 ? 39 : req.version.minor;
  try {
    const query = pairs(req);
    const { groups, params } = parseCandidateQuery(query, minor);
    const snapshot = await req.snapshots.get();
    const rawJson = answer(snapshot, `${minor}?${new URLSearchParams(query as [string, string][]).toString()}`, () => {
      const result = findAllocationCandidates(snapshot, groups, params);
      return renderCandidatesJson(snapshot, result, minor, new Set(groups.flatMap((g) => [...g.resources.keys()])));
    });
    return { status: 200, rawJson, headers: cacheHeaders(req, new Date()) };
  } catch (err) {
    if (err instanceof CandidateQueryError) throw badRequest(err.message, err.code);
    throw err;
  }
}
