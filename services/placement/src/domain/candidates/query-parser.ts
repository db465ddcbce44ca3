/**
 * GET /allocation_candidates query -> request groups and request-wide parameters, as
 * Placement's `lib.RequestGroup.dict_from_request` and `RequestWideParams.from_request`,
 * microversion by microversion (1.10 - 1.39), with Placement's 400 texts.
 */
import { ErrorCode } from '../errors';
import { CandidateQueryError } from './errors';
import { groupKeyPattern, validateQuerySchema } from './query-schema';
import { parseInTree, parseMemberOf, parseResources, parseTraits } from './query-values';
import type { RequestGroup, RequestWideParams } from './types';

/** The query as ordered (key, value) pairs, repeats included. */
export type QueryPairs = readonly (readonly [string, string])[];

/** A parsed request: groups in query order plus request-wide parameters. */
export interface ParsedCandidateQuery {
  readonly groups: RequestGroup[];
  readonly params: RequestWideParams;
}

interface MutableGroup {
  suffix: string;
  resources: Map<string, number>;
  requiredTraits: string[][];
  forbiddenTraits: string[];
  memberOf: string[][];
  forbiddenAggregates: string[];
  inTree: string | null;
}

function allValues(pairs: QueryPairs, key: string): string[] {
  return pairs.filter(([k]) => k === key).map(([, v]) => v);
}

function parseGroupTraits(pairs: QueryPairs, suffix: string, minor: number): { required: string[][]; forbidden: string[] } {
  let values = allValues(pairs, `required${suffix}`);
  if (minor < 39) values = values.slice(-1);
  const required: string[][] = [];
  const forbidden = new Set<string>();
  for (const v of values) {
    const parsed = parseTraits(v, minor >= 22, minor >= 39);
    required.push(...parsed.required);
    parsed.forbidden.forEach((t) => forbidden.add(t));
  }
  return { required, forbidden: [...forbidden] };
}

function parseGroupMemberOf(pairs: QueryPairs, suffix: string, minor: number): { required: string[][]; forbidden: string[] } {
  const values = allValues(pairs, `member_of${suffix}`);
  if (minor < 24 && values.length > 1) {
    throw new CandidateQueryError(`Multiple member_of${suffix} parameters are not supported`);
  }
  const required: string[][] = [];
  const forbidden = new Set<string>();
  for (const v of values) {
    const parsed = parseMemberOf(v);
    if (parsed.required.length > 0) required.push(parsed.required);
    if (parsed.forbidden.length > 0) {
      if (minor < 32) {
        throw new CandidateQueryError(`Forbidden member_of${suffix} parameters are not supported in the specified microversion`);
      }
      parsed.forbidden.forEach((a) => forbidden.add(a));
    }
  }
  return { required, forbidden: [...forbidden] };
}

function parseGroups(pairs: QueryPairs, minor: number): Map<string, MutableGroup> {
  const pattern = groupKeyPattern(minor);
  const bySuffix = new Map<string, MutableGroup>();
  for (const [key, val] of pairs) {
    const match = pattern.exec(key);
    if (!match) continue;
    const prefix = match[1] as string;
    const suffix = match[2] ?? '';
    let group = bySuffix.get(suffix);
    if (!group) {
      group = {
        suffix,
        resources: new Map(),
        requiredTraits: [],
        forbiddenTraits: [],
        memberOf: [],
        forbiddenAggregates: [],
        inTree: null,
      };
      bySuffix.set(suffix, group);
    }
    if (prefix === 'resources') group.resources = parseResources(val);
    else if (prefix === 'required') {
      const t = parseGroupTraits(pairs, suffix, minor);
      group.requiredTraits = t.required;
      group.forbiddenTraits = t.forbidden;
    } else if (prefix === 'member_of') {
      const m = parseGroupMemberOf(pairs, suffix, minor);
      group.memberOf = m.required;
      group.forbiddenAggregates = m.forbidden;
    } else group.inTree = parseInTree(val);
  }
  return bySuffix;
}

function checkSameSubtreeGroups(bySuffix: Map<string, MutableGroup>, sameSubtrees: readonly (readonly string[])[]): void {
  const resourceless = [...bySuffix.values()].filter((g) => g.resources.size === 0).map((g) => g.suffix);
  if (resourceless.length === bySuffix.size) {
    throw new CandidateQueryError('There must be at least one resources or resources[$S] parameter.', ErrorCode.QUERYPARAM_MISSING_VALUE);
  }
  const subtree = new Set(sameSubtrees.flat());
  const bad = resourceless.filter((s) => !subtree.has(s));
  if (bad.length > 0) {
    throw new CandidateQueryError(
      `Resourceless suffixed group request should be specified in \`same_subtree\` query param: bad group(s) - ${pyList(bad)}.`,
      ErrorCode.QUERYPARAM_BAD_VALUE,
    );
  }
  const unknown = [...subtree].filter((s) => !bySuffix.has(s));
  if (unknown.length > 0) {
    throw new CandidateQueryError(
      `Real suffixes should be specified in \`same_subtree\`: ${pyList(unknown)} not found in ${pyList([...bySuffix.keys()])}.`,
      ErrorCode.QUERYPARAM_BAD_VALUE,
    );
  }
}

function pyList(items: readonly string[]): string {
  return `[${items.map((s) => `'${s}'`).join(', ')}]`;
}

function checkOrphans(bySuffix: Map<string, MutableGroup>): void {
  const groups = [...bySuffix.values()];
  const orphanTraits = groups.filter((g) => g.requiredTraits.length > 0 && g.resources.size === 0).map((g) => `required${g.suffix}`);
  if (orphanTraits.length > 0) {
    throw new CandidateQueryError(
      `All traits parameters must be associated with resources.  Found the following orphaned traits keys: ${orphanTraits.join(', ')}`,
    );
  }
  const orphanAggs = groups
    .filter((g) => g.resources.size === 0 && (g.memberOf.length > 0 || g.forbiddenAggregates.length > 0))
    .map((g) => `member_of${g.suffix}`);
  if (orphanAggs.length > 0) {
    throw new CandidateQueryError(
      `All member_of parameters must be associated with resources. Found the following orphaned member_of keys: ${orphanAggs.join(', ')}`,
    );
  }
  if (!groups.every((g) => g.resources.size > 0)) throw new CandidateQueryError('All request groups must specify resources.');
  if (groups.length === 0) {
    throw new CandidateQueryError('At least one request group (`resources` or `resources{$S}`) is required.');
  }
}

function checkForbiddenConflicts(bySuffix: Map<string, MutableGroup>): void {
  const conflicts: string[] = [];
  for (const g of bySuffix.values()) {
    for (const any of g.requiredTraits) {
      if (any.every((t) => g.forbiddenTraits.includes(t))) conflicts.push(`required${g.suffix}: (${[...any].sort().join(', ')})`);
    }
  }
  if (conflicts.length > 0) {
    throw new CandidateQueryError(
      `Conflicting required and forbidden traits found in the following traits keys: ${conflicts.sort().join(', ')}`,
    );
  }
}

function parseRootRequired(pairs: QueryPairs): { required: string[]; forbidden: string[] } {
  const values = allValues(pairs, 'root_required');
  if (values.length === 0) return { required: [], forbidden: [] };
  if (values.length > 1)
    throw new CandidateQueryError("Query parameter 'root_required' may be specified only once.", ErrorCode.ILLEGAL_DUPLICATE_QUERYPARAM);
  const parsed = parseTraits(values[0] as string, true, false);
  const required = parsed.required.map((s) => s[0] as string);
  const conflicts = required.filter((t) => parsed.forbidden.includes(t));
  if (conflicts.length > 0) {
    throw new CandidateQueryError(
      `Conflicting required and forbidden traits found in root_required: ${conflicts.join(', ')}`,
      ErrorCode.QUERYPARAM_BAD_VALUE,
    );
  }
  return { required, forbidden: parsed.forbidden };
}

function parseSameSubtrees(pairs: QueryPairs): string[][] {
  return allValues(pairs, 'same_subtree').map((val) => {
    const suffixes = [...new Set(val.split(',').map((s) => s.trim()))];
    if (suffixes.includes('')) {
      throw new CandidateQueryError(
        'Empty string (unsuffixed group) can not be specified in `same_subtree` ',
        ErrorCode.QUERYPARAM_BAD_VALUE,
      );
    }
    return suffixes;
  });
}

function parseWide(pairs: QueryPairs, minor: number): RequestWideParams {
  // NOTE: as Placement (webob): the schema checked the LAST value of a repeated limit or
  // group_policy, the search uses the FIRST (any non-empty value other than isolate is none).
  const limit = allValues(pairs, 'limit')[0];
  const policy = allValues(pairs, 'group_policy')[0];
  const root = parseRootRequired(pairs);
  return {
    limit: limit === undefined ? null : Number.parseInt(limit, 10),
    groupPolicy: policy === undefined || policy === '' ? null : policy === 'isolate' ? 'isolate' : 'none',
    rootRequired: root.required,
    rootForbidden: root.forbidden,
    sameSubtrees: parseSameSubtrees(pairs),
    nestedAware: minor >= 29,
  };
}

/**
 * Parses and validates a query at microversion 1.`minor` (>= 10). Throws
 * CandidateQueryError (HTTP 400) with Placement's message for any invalid input.
 */
export function parseCandidateQuery(pairs: QueryPairs, minor: number): ParsedCandidateQuery {
  const last = new Map<string, string>();
  for (const [k, v] of pairs) last.set(k, v);
  validateQuerySchema(last, minor);
  const params = parseWide(pairs, minor);
  const bySuffix = parseGroups(pairs, minor);
  if (minor >= 36) checkSameSubtreeGroups(bySuffix, params.sameSubtrees);
  else checkOrphans(bySuffix);
  if (minor >= 22) checkForbiddenConflicts(bySuffix);
  const groups: RequestGroup[] = [...bySuffix.values()].map((g) => ({ ...g, useSameProvider: g.suffix !== '' }));
  if (params.groupPolicy === null && groups.filter((g) => g.useSameProvider).length > 1) {
    throw new CandidateQueryError('The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.');
  }
  return { groups, params };
}
