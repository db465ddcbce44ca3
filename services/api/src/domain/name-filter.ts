import { badRequest } from './errors';

/** Longest `name` pattern accepted (PostgreSQL compiles it; this bounds the compile). */
export const MAX_NAME_PATTERN = 255;

/** Python's `repr()` of a string, as Nova's jsonschema messages quote values. Pure. */
export function pythonRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}

/** Nova's 400 for a query parameter that is not a regular expression. Pure. */
export function notARegex(key: string, value: string, why?: string): Error {
  return badRequest(
    `Invalid input for query parameters ${key}. Value: ${value}. ${pythonRepr(value)} is not a 'regex'${why === undefined ? '' : ` (${why})`}`,
  );
}

/** The `name` filter: every value given (Nova judges each), of which the last is matched. */
export interface NameFilter {
  readonly values: readonly string[];
  readonly pattern: string;
}

/**
 * The `name` filter of `GET /servers` from every value given (Nova validates each, then uses
 * the last): undefined when absent. What can be judged without the regex engine is judged
 * here — empty (Nova: not a regex), NUL (PostgreSQL text cannot hold it), longer than
 * {@link MAX_NAME_PATTERN}; the syntax is judged by PostgreSQL, which matches it. Pure.
 */
export function namePattern(values: readonly string[]): NameFilter | undefined {
  for (const v of values) {
    if (v === '') throw notARegex('name', v);
    if (v.includes('\u0000')) throw notARegex('name', v, 'it contains a NUL character');
    if (v.length > MAX_NAME_PATTERN) throw notARegex('name', v, `longer than ${MAX_NAME_PATTERN} characters`);
  }
  const pattern = values[values.length - 1];
  return pattern === undefined ? undefined : { values: [...values], pattern };
}
