import { badRequest } from './errors';

// Nova's jsonschema formats and parameter types (nova/api/validation), as predicates. Pure.

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Not printable for Nova: any "other" (control, format, surrogate, private use, unassigned) or a line/paragraph separator. */
const NOT_PRINTABLE = /[\p{C}\p{Zl}\p{Zp}]/u;
/** What a name may not start or end with: a non-printable character or a space separator. */
const EDGE = /^[\p{C}\p{Z}]|[\p{C}\p{Z}]$/u;

/** Nova's `name` format: printable characters, not starting or ending with whitespace. */
export const isNovaName = (s: string): boolean => !NOT_PRINTABLE.test(s) && !EDGE.test(s);

/** Nova's description pattern: printable characters (spaces anywhere). */
export const isPrintable = (s: string): boolean => !NOT_PRINTABLE.test(s);

/** Nova's message for a value that fails the `name` format (exception.InvalidName). */
export const invalidName = (): Error =>
  badRequest("An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.");

/** Nova's `parameter_types.boolean`: a JSON boolean or one of these strings. */
const BOOLEAN_STRINGS = [
  'True',
  'TRUE',
  'true',
  '1',
  'ON',
  'On',
  'on',
  'YES',
  'Yes',
  'yes',
  'False',
  'FALSE',
  'false',
  '0',
  'OFF',
  'Off',
  'off',
  'NO',
  'No',
  'no',
];
export const isNovaBoolean = (v: unknown): boolean => typeof v === 'boolean' || (typeof v === 'string' && BOOLEAN_STRINGS.includes(v));
/** The value of a {@link isNovaBoolean} (strictly one). */
export const novaBoolean = (v: boolean | string): boolean =>
  v === true || (typeof v === 'string' && ['true', '1', 'on', 'yes'].includes(v.toLowerCase()));

/** Nova's metadata keys (`^[a-zA-Z0-9-_:. ]{1,255}$`). */
export const METADATA_KEY = /^[a-zA-Z0-9_:. -]{1,255}$/;

/** Standard base64 (whitespace ignored), as Nova's `base64` format decodes it. */
export function isBase64(s: string): boolean {
  const compact = s.replace(/\s+/g, '');
  return compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact);
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** Nova's `ip_address`: an IPv4 or IPv6 address. */
export function isIpAddress(s: string): boolean {
  if (IPV4.test(s)) return true;
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return false;
  const parts = s.split('::');
  if (parts.length > 2) return false;
  const groups = parts.flatMap((p) => (p === '' ? [] : p.split(':')));
  const last = groups[groups.length - 1] ?? '';
  const v4 = IPV4.test(last) ? 1 : 0;
  const hex = v4 === 1 ? groups.slice(0, -1) : groups;
  if (!hex.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = hex.length + v4 * 2;
  return parts.length === 2 ? count < 8 : count === 8;
}
