/**
 * Parsers of single query parameter values of GET /allocation_candidates, with
 * Placement's error texts (placement/util.py).
 */
import { CandidateQueryError } from './errors';

const INT_RE = /^\s*[+-]?\d+\s*$/;

/** Canonical lowercase dashed uuid for anything oslo's `is_uuid_like` accepts, else null. */
export function normalizeUuid(value: string): string | null {
  const hex = value
    .replace('urn:', '')
    .replace('uuid:', '')
    .replace(/^\{+|\}+$/g, '')
    .replace(/-/g, '')
    .toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `VCPU:2,MEMORY_MB:1024` -> Map; throws Placement's "Badly formed resources parameter". */
export function parseResources(qs: string): Map<string, number> {
  const form = 'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024.';
  if (qs.trim() === '') throw new CandidateQueryError(`${form} Got: empty string.`);
  const result = new Map<string, number>();
  for (const item of qs.split(',')) {
    const parts = item.split(':');
    if (parts.length !== 2) throw new CandidateQueryError(`${form} Got: ${item}.`);
    const [name, rawAmount] = parts as [string, string];
    if (!INT_RE.test(rawAmount)) {
      throw new CandidateQueryError(`Requested resource ${name} expected positive integer amount. Got: ${rawAmount}.`);
    }
    const amount = Number.parseInt(rawAmount.trim(), 10);
    if (amount < 1) throw new CandidateQueryError(`Requested resource ${name} requires amount >= 1. Got: ${amount}.`);
    result.set(name, amount);
  }
  return result;
}

/** Parsed `required` value: AND of OR-sets, and forbidden traits. */
export interface TraitsValue {
  readonly required: string[][];
  readonly forbidden: string[];
}

function parseAnyTraits(val: string, allowAny: boolean): TraitsValue {
  if (!allowAny) {
    throw new CandidateQueryError(
      `Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${val}`,
    );
  }
  const any = [
    ...new Set(
      val
        .slice(3)
        .split(',')
        .map((s) => s.trim()),
    ),
  ];
  if (any.some((t) => t === '')) {
    throw new CandidateQueryError(
      `Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${val}`,
    );
  }
  if (any.some((t) => t.startsWith('!'))) {
    throw new CandidateQueryError(
      `Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: ${val}`,
    );
  }
  return { required: [any], forbidden: [] };
}

/** One `required` value (placement.util.normalize_traits_qs_param). */
export function parseTraits(val: string, allowForbidden: boolean, allowAny: boolean): TraitsValue {
  if (val.startsWith('in:')) return parseAnyTraits(val, allowAny);
  const all = val.split(',').map((s) => s.trim());
  const forbidden = [...new Set(all.filter((t) => t.startsWith('!')).map((t) => t.replace(/^!+/, '')))];
  if ([...forbidden, ...all].some((t) => t === '')) {
    const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC';
    throw new CandidateQueryError(
      `Invalid query string parameters: Expected 'required' parameter value of the form: ${form}. Got an empty trait in: ${val}`,
    );
  }
  if (forbidden.length > 0 && !allowForbidden) {
    throw new CandidateQueryError(
      `Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${val}`,
    );
  }
  const required = [...new Set(all.filter((t) => !t.startsWith('!')))].map((t) => [t]);
  return { required, forbidden };
}

/** One `member_of` value: required any-of set and forbidden set of aggregate uuids. */
export function parseMemberOf(value: string): { required: string[]; forbidden: string[] } {
  if (value.includes(',') && !(value.startsWith('in:') || value.startsWith('!in:'))) {
    throw new CandidateQueryError(
      `Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: ${value}`,
    );
  }
  let required: string[] = [];
  let forbidden: string[] = [];
  if (value.startsWith('!in:')) forbidden = value.slice(4).split(',');
  else if (value.startsWith('!')) forbidden = [value.slice(1)];
  else if (value.startsWith('in:')) required = value.slice(3).split(',');
  else required = [value];
  const norm = (u: string): string => {
    const n = normalizeUuid(u);
    if (n === null) {
      throw new CandidateQueryError(`Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: ${u}`);
    }
    return n;
  };
  return { required: [...new Set(required.map(norm))], forbidden: [...new Set(forbidden.map(norm))] };
}

/** `in_tree` value: a provider uuid. */
export function parseInTree(value: string): string {
  const n = normalizeUuid(value.trim());
  if (n === null) {
    throw new CandidateQueryError(`Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: ${value}`);
  }
  return n;
}
