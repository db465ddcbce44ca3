import { badRequest } from './errors';
import { pythonRepr } from './name-filter';
import { invalidName, isNovaBoolean, isNovaName, novaBoolean } from './nova-formats';
import { invalidInput } from './server-create-errors';

// Small jsonschema-like checks for action bodies, with Nova's (jsonschema's) messages. Pure.

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Python's repr of a JSON value, as jsonschema prints it in messages. */
export function repr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return pythonRepr(v);
  if (Array.isArray(v)) return `[${v.map(repr).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v as Obj)
      .map(([k, x]) => `${pythonRepr(k)}: ${repr(x)}`)
      .join(', ')}}`;
  return String(v);
}

const typeError = (path: string, v: unknown, types: readonly string[]): Error =>
  invalidInput(path, v, `${repr(v)} is not of type ${types.map((t) => `'${t}'`).join(', ')}`);

/** The object under `key` (the action's own body), or Nova's 400; `nullable` allows null (returned as undefined). */
export function actionObject(body: Obj, key: string, nullable = false): Obj | undefined {
  const v = body[key];
  if (v === null && nullable) return undefined;
  if (!isObj(v)) throw typeError(key, v, nullable ? ['object', 'null'] : ['object']);
  return v;
}

/** Nova's `additionalProperties: false`. */
export function onlyKeys(path: string, o: Obj, allowed: readonly string[]): void {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    throw badRequest(
      `Invalid input for field/attribute ${path}. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  }
}

/** Nova's `required`. */
export function required(path: string, o: Obj, keys: readonly string[]): void {
  for (const k of keys) if (!(k in o)) throw invalidInput(path, repr(o), `'${k}' is a required property`);
}

/** Nova's `parameter_types.fqdn` (a host name), optionally nullable. */
export function fqdn(path: string, v: unknown, nullable = false): string | undefined {
  if (v === null && nullable) return undefined;
  if (typeof v !== 'string') throw typeError(path, v, nullable ? ['string', 'null'] : ['string']);
  if (v.length < 1) throw invalidInput(path, v, `${repr(v)} is too short`);
  if (v.length > 255) throw invalidInput(path, v, `${repr(v)} is too long`);
  if (!/^[a-zA-Z0-9-._]*$/.test(v)) throw invalidInput(path, v, `${repr(v)} does not match '^[a-zA-Z0-9-._]*$'`);
  return v;
}

/** Nova's `parameter_types.boolean` (JSON booleans and the usual strings). */
export function booleanParam(path: string, v: unknown): boolean {
  if (!isNovaBoolean(v)) throw invalidInput(path, v, `${repr(v)} is not one of the allowed values`);
  return novaBoolean(v as boolean | string);
}

/** Nova's `parameter_types.name`: 1-255 printable characters, no leading or trailing whitespace. */
export function nameParam(path: string, v: unknown): string {
  if (typeof v !== 'string') throw typeError(path, v, ['string']);
  if (v.length < 1) throw invalidInput(path, v, `${repr(v)} is too short`);
  if (v.length > 255) throw invalidInput(path, v, `${repr(v)} is too long`);
  if (!isNovaName(v)) throw invalidName();
  return v;
}

/** A plain string (Nova's `admin_password`: any length). */
export function stringParam(path: string, v: unknown): string {
  if (typeof v !== 'string') throw typeError(path, v, ['string']);
  return v;
}

/** One of `values` (jsonschema `enum`). */
export function enumParam<T extends string>(path: string, v: unknown, values: readonly T[]): T {
  if (typeof v !== 'string' || !values.includes(v as T))
    throw invalidInput(path, v, `${repr(v)} is not one of [${values.map((x) => `'${x}'`).join(', ')}]`);
  return v as T;
}

export { typeError };
