import { badRequest, ErrorCode } from './errors';
import { atLeast, type Microversion } from './microversion';

/** A query string as a multi-map, in request order. */
export type QueryParams = ReadonlyMap<string, readonly string[]>;

const UUID_LIKE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
/** oslo's is_uuid_like: 32 hex digits, dashes optional. */
export const isUuidLike = (v: string): boolean => UUID_LIKE.test(v.trim());

/** Canonical (lower-case, dashed) form of a uuid-like string. */
export function canonicalUuid(v: string): string {
  const hex = v
    .trim()
    .replace(/[-{}]/g, '')
    .replace(/^urn:uuid:/i, '')
    .toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The last value of a parameter (what Python's `dict(req.GET)` sees). */
export function lastValues(q: QueryParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, vs] of q) {
    const v = vs[vs.length - 1];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

const RESOURCES_FORM =
  'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024.';

/** Parse `VCPU:2,MEMORY_MB:1024` into amounts by class; 400 on any malformed entry. */
export function parseResources(qs: string): Map<string, number> {
  if (qs.trim() === '') throw badRequest(`${RESOURCES_FORM} Got: empty string.`);
  const out = new Map<string, number>();
  for (const part of qs.split(',')) {
    const bits = part.split(':');
    if (bits.length !== 2) throw badRequest(`${RESOURCES_FORM} Got: ${part}.`);
    const [name = '', amountText = ''] = bits;
    if (!/^\s*[-+]?\d+\s*$/.test(amountText)) {
      throw badRequest(`Requested resource ${name} expected positive integer amount. Got: ${amountText}.`);
    }
    const amount = Number.parseInt(amountText, 10);
    if (amount < 1) throw badRequest(`Requested resource ${name} requires amount >= 1. Got: ${amount}.`);
    out.set(name, amount);
  }
  return out;
}

/** Required traits as AND-of-OR sets, plus forbidden traits. */
export interface TraitFilter {
  readonly anyOf: ReadonlyArray<ReadonlySet<string>>;
  readonly forbidden: ReadonlySet<string>;
}

/** Parse one `required` value: `A,!B` or (1.39+) `in:A,B`. */
export function parseTraitsValue(val: string, allowForbidden: boolean, allowAny: boolean): TraitFilter {
  if (val.startsWith('in:')) {
    if (!allowAny)
      throw badRequest(
        `Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${val}`,
      );
    const any = new Set(
      val
        .slice(3)
        .split(',')
        .map((s) => s.trim()),
    );
    if ([...any].some((t) => t === ''))
      throw badRequest(
        `Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${val}`,
      );
    if ([...any].some((t) => t.startsWith('!')))
      throw badRequest(
        `Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: ${val}`,
      );
    return { anyOf: [any], forbidden: new Set() };
  }
  const all = val.split(',').map((s) => s.trim());
  const forbidden = new Set(all.filter((t) => t.startsWith('!')).map((t) => t.replace(/^!+/, '')));
  if (all.some((t) => t === '') || [...forbidden].some((t) => t === '')) {
    const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC';
    throw badRequest(
      `Invalid query string parameters: Expected 'required' parameter value of the form: ${form}. Got an empty trait in: ${val}`,
    );
  }
  if (forbidden.size > 0 && !allowForbidden) {
    throw badRequest(
      `Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${val}`,
    );
  }
  return { anyOf: all.filter((t) => !t.startsWith('!')).map((t) => new Set([t])), forbidden };
}

/** All `required<suffix>` values by microversion (only the last one before 1.39). */
export function parseRequired(q: QueryParams, v: Microversion, suffix = ''): TraitFilter {
  let values = q.get(`required${suffix}`) ?? [];
  if (!atLeast(v, 39)) values = values.slice(-1);
  const anyOf: Array<ReadonlySet<string>> = [];
  const forbidden = new Set<string>();
  for (const value of values) {
    const f = parseTraitsValue(value, atLeast(v, 22), atLeast(v, 39));
    anyOf.push(...f.anyOf);
    for (const t of f.forbidden) forbidden.add(t);
  }
  return { anyOf, forbidden };
}

/** Aggregate filter: each set needs one member (AND across sets); forbidden excludes. */
export interface MemberOfFilter {
  readonly anyOf: ReadonlyArray<ReadonlySet<string>>;
  readonly forbidden: ReadonlySet<string>;
}

/** Parse one `member_of` value: `U`, `!U`, `in:U1,U2`, `!in:U1,U2`. */
export function parseMemberOfValue(value: string): { required: Set<string>; forbidden: Set<string> } {
  if (value.includes(',') && !(value.startsWith('in:') || value.startsWith('!in:'))) {
    throw badRequest(
      `Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: ${value}`,
    );
  }
  let required = new Set<string>();
  let forbidden = new Set<string>();
  if (value.startsWith('!in:')) forbidden = new Set(value.slice(4).split(','));
  else if (value.startsWith('!')) forbidden = new Set([value.slice(1)]);
  else if (value.startsWith('in:')) required = new Set(value.slice(3).split(','));
  else required = new Set([value]);
  for (const u of [...required, ...forbidden]) {
    if (!isUuidLike(u))
      throw badRequest(`Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: ${u}`);
  }
  return { required: new Set([...required].map(canonicalUuid)), forbidden: new Set([...forbidden].map(canonicalUuid)) };
}

/** All `member_of<suffix>` values, with Placement's microversion rules (1.24 repeat, 1.32 `!`). */
export function parseMemberOf(q: QueryParams, v: Microversion, suffix = ''): MemberOfFilter {
  const values = q.get(`member_of${suffix}`) ?? [];
  if (!atLeast(v, 24) && values.length > 1) throw badRequest(`Multiple member_of${suffix} parameters are not supported`);
  const anyOf: Array<ReadonlySet<string>> = [];
  const forbidden = new Set<string>();
  for (const value of values) {
    const p = parseMemberOfValue(value);
    if (p.required.size > 0) anyOf.push(p.required);
    if (p.forbidden.size > 0) {
      if (!atLeast(v, 32)) throw badRequest(`Forbidden member_of${suffix} parameters are not supported in the specified microversion`);
      for (const u of p.forbidden) forbidden.add(u);
    }
  }
  return { anyOf, forbidden };
}

/** Parse an `in_tree` value (a provider uuid). */
export function parseInTree(value: string): string {
  if (!isUuidLike(value)) {
    throw badRequest(`Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: ${value}`);
  }
  return canonicalUuid(value);
}

/** 400 `placement.query.bad_value` helper for handlers. */
export const badQueryValue = (detail: string) => badRequest(detail, ErrorCode.QUERYPARAM_BAD_VALUE);
