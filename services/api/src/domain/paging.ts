import { badRequest } from './errors';
import { pythonRepr } from './name-filter';

// Nova's paging query parameters (`limit`, `marker`, `changes-since`, `changes-before`) as its
// query schemas validate them (parameter_types.single_param, non_negative_integer, date-time). Pure.

export type Query = Readonly<Record<string, string | string[]>>;

/** A query value as Python prints it: a string as it is, a list of strings as its repr. Pure. */
const pythonValue = (v: string | readonly string[]): string => (typeof v === 'string' ? v : `[${v.map(pythonRepr).join(', ')}]`);

/**
 * Nova's 400 for a query parameter its schema refuses: the value jsonschema failed on (one item
 * of the parameter's list for a format or pattern, the whole list for too many items).
 */
export const queryError = (key: string, value: string | readonly string[], why: string): Error =>
  badRequest(`Invalid input for query parameters ${key}. Value: ${pythonValue(value)}. ${why}`);

/** The last value of a parameter. */
export const lastValue = (q: Query, k: string): string | undefined => {
  const v = q[k];
  return Array.isArray(v) ? v[v.length - 1] : v;
};

/** A parameter given at most once (`single_param`). */
export function singleValue(q: Query, k: string): string | undefined {
  const v = q[k];
  if (Array.isArray(v) && v.length > 1) throw queryError(k, v, `${pythonValue(v)} is too long`);
  return lastValue(q, k);
}

/** Nova's `date-time` format (ISO 8601; a time without a zone is UTC, as Nova normalizes it). */
export function dateTimeParam(k: string, v: string): Date {
  const m = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(v);
  const d = m === null ? NaN : Date.parse(m[3] === undefined ? `${v.replace(' ', 'T')}Z` : v.replace(' ', 'T'));
  // NOTE: Python's datetime starts at year 1: Nova refuses a year 0000 (a time zone may shift it there)
  if (Number.isNaN(d) || new Date(d).getUTCFullYear() < 1) throw queryError(k, v, `${pythonRepr(v)} is not a 'date-time'`);
  return new Date(d);
}

/** Nova's additionalProperties: false on a query (the message jsonschema gives at the root). */
export function onlyQueryKeys(q: Query, known: readonly string[]): void {
  const extra = Object.keys(q).filter((k) => !known.includes(k));
  if (extra.length > 0)
    throw badRequest(
      `Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
}

/** Paging and time filters as read by `common.get_limit_and_marker` and the changes-* filters. */
export interface Paging {
  readonly limit: number;
  readonly marker?: string;
  readonly changesSince?: Date;
  readonly changesBefore?: Date;
}

/** Reads limit (capped at `maxLimit`), marker, changes-since and, when `withBefore`, changes-before. Pure. */
export function parsePaging(q: Query, maxLimit: number, withBefore: boolean): Paging {
  const limitRaw = singleValue(q, 'limit');
  if (limitRaw !== undefined && !/^[0-9]+$/.test(limitRaw))
    throw queryError('limit', limitRaw, `${pythonRepr(limitRaw)} does not match '^[0-9]*$'`);
  const since = singleValue(q, 'changes-since');
  const before = withBefore ? singleValue(q, 'changes-before') : undefined;
  const p: Paging = {
    limit: Math.min(limitRaw === undefined ? maxLimit : Number(limitRaw), maxLimit),
    marker: singleValue(q, 'marker'),
    changesSince: since === undefined ? undefined : dateTimeParam('changes-since', since),
    changesBefore: before === undefined ? undefined : dateTimeParam('changes-before', before),
  };
  if (p.changesSince !== undefined && p.changesBefore !== undefined && p.changesBefore < p.changesSince) {
    throw badRequest('The value of changes-since must be less than or equal to changes-before.');
  }
  return p;
}

/** Nova's `_get_collection_links`: a `next` link when the page is full (len == limit), its marker the last item's id. Pure. */
export function nextLink(
  q: Query,
  url: string,
  lastId: string | undefined,
  pageLength: number,
  limit: number,
): { rel: string; href: string }[] {
  if (limit === 0 || pageLength !== limit || lastId === undefined) return [];
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (k !== 'marker') for (const x of Array.isArray(v) ? v : [v]) params.append(k, x);
  params.set('marker', lastId);
  return [{ rel: 'next', href: `${url}?${params.toString()}` }];
}
