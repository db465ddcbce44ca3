import type { Pool } from 'pg';
import type { CandidateSnapshotCache } from '../sql/candidates-snapshot';
import type { CandidateBodies } from './candidate-bodies';
import type { Caller, Policy } from '../../domain/auth';
import { PlacementError } from '../../domain/errors';
import { validateSchema, type JsonSchema } from '../../domain/json-schema';
import type { Microversion } from '../../domain/microversion';
import { lastValues, type QueryParams } from '../../domain/query-params';

/** Everything a handler may read about a request, already authenticated and versioned. */
export interface PlacementRequest {
  readonly method: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: QueryParams;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly rawBody: string | undefined;
  readonly version: Microversion;
  readonly caller: Caller;
  readonly requestId: string;
  /** `scheme://host` of the request, for absolute Location headers as webob writes them. */
  readonly baseUrl: string;
  readonly pool: Pool;
  /** The database's candidate snapshots (GET /allocation_candidates). */
  readonly snapshots: CandidateSnapshotCache;
  /** The app's rendered candidates answers (GET /allocation_candidates). */
  readonly candidateBodies: CandidateBodies;
}

/** What a handler answers; `body` undefined means an empty body. */
export interface PlacementReply {
  readonly status: number;
  readonly body?: unknown;
  /** A body already serialized as JSON (large answers); wins over `body`. */
  readonly rawJson?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type Handler = (req: PlacementRequest) => Promise<PlacementReply>;

/** One method of one route: who may call it, from which microversion, and how. */
export interface MethodSpec {
  readonly handler: Handler;
  readonly policy: Policy;
  /** Lowest (and highest) microversion serving the method; outside → `versionStatus`. */
  readonly minVersion?: number;
  readonly maxVersion?: number;
  readonly versionStatus?: number;
  /** GETs check Accept (406 unless JSON is acceptable). */
  readonly json?: boolean;
  /** Writes with a body demand `content-type: application/json` (415 otherwise). */
  readonly requireJson?: boolean | ((v: Microversion) => boolean);
}

export interface RouteDef {
  readonly path: string;
  readonly methods: Readonly<Record<string, MethodSpec>>;
}

/** Parse and schema-validate a JSON body with Placement's messages (400 on failure). */
export function jsonBody<T>(req: PlacementRequest, schema: JsonSchema): T {
  let data: unknown;
  try {
    data = JSON.parse(req.rawBody ?? '');
  } catch (e) {
    throw new PlacementError(400, `Malformed JSON: ${(e as Error).message}`);
  }
  const err = validateSchema(data, schema);
  if (err !== undefined) throw new PlacementError(400, `JSON does not validate: ${err}`);
  return data as T;
}

/** Validate the query string (last value of each key) against a schema. */
export function validateQuery(req: PlacementRequest, schema: JsonSchema): Record<string, string> {
  const q = lastValues(req.query);
  const err = validateSchema(q, schema);
  if (err !== undefined) throw new PlacementError(400, `Invalid query string parameters: ${err}`);
  return q;
}

/** HTTP-date (RFC 7231) of a timestamp, as webob writes Last-Modified. */
export const httpDate = (d: Date): string => d.toUTCString();

/** last-modified + cache-control headers Placement sends from 1.15 on. */
export function cacheHeaders(req: PlacementRequest, modified: Date | undefined): Record<string, string> {
  if (!(req.version.major > 1 || req.version.minor >= 15)) return {};
  return { 'last-modified': httpDate(modified ?? new Date()), 'cache-control': 'no-cache' };
}

/** cacheHeaders, but no last-modified when nothing was modified (Placement's empty inventory lists). */
export function cacheHeadersIfAny(req: PlacementRequest, modified: Date | undefined): Record<string, string> {
  const h = cacheHeaders(req, modified);
  if (modified === undefined) delete h['last-modified'];
  return h;
}

/** The most recent of a list of (updated_at ?? created_at) timestamps. */
export function latest(dates: ReadonlyArray<Date | null | undefined>): Date | undefined {
  let best: Date | undefined;
  for (const d of dates) if (d && (best === undefined || d > best)) best = d;
  return best;
}
