import { booleanParam, isObj, nameParam, onlyKeys, repr, required, typeError, type Obj } from './action-schema';
import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';
import { isPrintable, METADATA_KEY } from './nova-formats';
import { invalidInput } from './server-create-errors';

// The bodies of flavor create/update, extra specs and flavor access, judged as Nova's schemas
// (nova/api/openstack/compute/schemas/flavors.py, flavors_extraspecs.py, flavor_access.py) and
// then nova.compute.flavors.create's own checks, with their messages. Pure.

/** A flavor create as Nova's API reads it; `flavorid` undefined asks for a generated uuid. */
export interface FlavorCreate {
  readonly name: string;
  readonly flavorid: string | undefined;
  readonly memoryMb: number;
  readonly vcpus: number;
  readonly rootGb: number;
  readonly ephemeralGb: number;
  readonly swap: number;
  readonly rxtxFactor: number;
  readonly isPublic: boolean;
  readonly description: string | null;
}

/** Nova's db MAX_INT and SQL_SP_FLOAT_MAX. */
const MAX_INT = 0x7fffffff;
const FLOAT_MAX = 3.40282e38;
const FLAVOR_ID = /^(?! )[a-zA-Z0-9. _-]+(?<! )$/;

/** `flavor_param_positive` / `_non_negative` (schema), then `utils.validate_integer` (what a string holds). */
function flavorInt(o: Obj, key: string, label: string, min: number): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (v < min) throw invalidInput(key, v, `${v} is less than the minimum of ${min}`);
    if (v > MAX_INT) throw invalidInput(key, v, `${v} is greater than the maximum of ${MAX_INT}`);
    return v;
  }
  if (typeof v !== 'string') throw typeError(key, v, ['integer', 'string']);
  if (!/^[0-9]+$/.test(v)) throw invalidInput(key, v, `${repr(v)} does not match '^[0-9]+$'`);
  const n = Number(v);
  if (n < min) throw badRequest(`Invalid input received: ${label} must be >= ${min}`);
  if (n > MAX_INT) throw badRequest(`Invalid input received: ${label} must be <= ${MAX_INT}`);
  return n;
}

function flavorId(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') throw typeError('id', v, ['string', 'number', 'null']);
  if (v.length < 1) throw invalidInput('id', v, `${repr(v)} is too short`);
  if (v.length > 255) throw invalidInput('id', v, `${repr(v)} is too long`);
  if (!FLAVOR_ID.test(v)) throw invalidInput('id', v, `${repr(v)} does not match '${FLAVOR_ID.source}'`);
  return v;
}

function rxtxFactor(v: unknown): number {
  if (v === undefined) return 1;
  if (typeof v === 'string') {
    if (!/^[0-9]+(\.[0-9]+)?$/.test(v)) throw invalidInput('rxtx_factor', v, `${repr(v)} does not match '^[0-9]+(\\.[0-9]+)?$'`);
  } else if (typeof v !== 'number') {
    throw typeError('rxtx_factor', v, ['number', 'string']);
  } else if (v <= 0) {
    throw invalidInput('rxtx_factor', v, `${v} is less than or equal to the minimum of 0`);
  } else if (v > FLOAT_MAX) {
    throw invalidInput('rxtx_factor', v, `${v} is greater than the maximum of ${FLOAT_MAX}`);
  }
  const n = Number(v);
  if (!(n > 0 && n <= FLOAT_MAX))
    throw badRequest(`Invalid input received: 'rxtx_factor' argument must be a float between 0 and ${FLOAT_MAX}`);
  return n;
}

/** The flavor description of 2.55: null or up to 65,535 printable characters. */
export function flavorDescription(v: unknown): string | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw typeError('description', v, ['string', 'null']);
  if (v.length > 65535) throw invalidInput('description', v, `${repr(v)} is too long`);
  if (!isPrintable(v)) throw invalidInput('description', v, `${repr(v)} does not match the printable characters pattern`);
  return v;
}

/**
 * The object under the body's one key `root`, judged as jsonschema judges the top level: the
 * value's type, then `required`, then extra keys (Nova prints top-level messages bare).
 */
export function rootObject(body: unknown, root: string): Obj {
  if (!isObj(body)) throw badRequest(`${repr(body)} is not of type 'object'`);
  const inner = body[root];
  if (inner !== undefined && !isObj(inner)) throw typeError(root, inner, ['object']);
  if (inner === undefined) throw badRequest(`'${root}' is a required property`);
  const extra = Object.keys(body).filter((k) => k !== root);
  if (extra.length > 0)
    throw badRequest(
      `Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  return inner;
}

const CREATE_KEYS = [
  'name',
  'id',
  'ram',
  'vcpus',
  'disk',
  'OS-FLV-EXT-DATA:ephemeral',
  'swap',
  'rxtx_factor',
  'os-flavor-access:is_public',
];

/** `POST /flavors`: `{"flavor": {...}}` (description from 2.55), or Nova's 400. */
export function parseFlavorCreate(body: unknown, version: Microversion): FlavorCreate {
  const f = rootObject(body, 'flavor');
  const withDescription = atLeast(version, 55);
  // NOTE: jsonschema reports the properties' own errors first, then what is missing, then extra keys.
  const name = f.name === undefined ? undefined : nameParam('name', f.name);
  const flavorid = flavorId(f.id);
  const memoryMb = flavorInt(f, 'ram', 'ram', 1);
  const vcpus = flavorInt(f, 'vcpus', 'vcpus', 1);
  const rootGb = flavorInt(f, 'disk', 'disk', 0);
  const ephemeralGb = flavorInt(f, 'OS-FLV-EXT-DATA:ephemeral', 'ephemeral', 0) ?? 0;
  const swap = flavorInt(f, 'swap', 'swap', 0) ?? 0;
  const rxtx = rxtxFactor(f.rxtx_factor);
  const isPublic =
    f['os-flavor-access:is_public'] === undefined ? true : booleanParam('os-flavor-access:is_public', f['os-flavor-access:is_public']);
  const description = withDescription && f.description !== undefined ? flavorDescription(f.description) : null;
  required('flavor', f, ['name', 'ram', 'vcpus', 'disk']);
  onlyKeys('flavor', f, withDescription ? [...CREATE_KEYS, 'description'] : CREATE_KEYS);
  // NOTE: `required` has just checked these four.
  return {
    name: name as string,
    flavorid,
    memoryMb: memoryMb as number,
    vcpus: vcpus as number,
    rootGb: rootGb as number,
    ephemeralGb,
    swap,
    rxtxFactor: rxtx,
    isPublic,
    description,
  };
}

/** `PUT /flavors/{id}` (2.55): `{"flavor": {"description": ...}}`, the description only. */
export function parseFlavorUpdate(body: unknown): string | null {
  const f = rootObject(body, 'flavor');
  const description = f.description === undefined ? undefined : flavorDescription(f.description);
  required('flavor', f, ['description']);
  onlyKeys('flavor', f, ['description']);
  return description ?? null;
}

/** Extra specs as Nova stores them (`path` undefined: the body's top level): keys `^[a-zA-Z0-9-_:. ]{1,255}$`, strings of ≤ 255 or numbers (kept as their text). */
export function parseExtraSpecs(path: string | undefined, specs: Obj): Record<string, string> {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(specs)) {
    if (!METADATA_KEY.test(k)) continue;
    if (typeof v === 'string') {
      if (v.length > 255) throw invalidInput(k, v, `${repr(v)} is too long`);
    } else if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw typeError(k, v, ['string', 'number']);
    } else if (String(v).length > 255) {
      throw badRequest('Invalid input received: extra_specs value has more than 255 characters.');
    }
    out.push([k, String(v)]);
  }
  const bad = Object.keys(specs).filter((k) => !METADATA_KEY.test(k));
  // NOTE: fromEntries, so a key such as __proto__ stays an own key.
  if (bad.length === 0) return Object.fromEntries(out);
  const message = `Additional properties are not allowed (${bad.map((k) => `'${k}'`).join(', ')} ${bad.length === 1 ? 'was' : 'were'} unexpected)`;
  throw badRequest(path === undefined ? message : `Invalid input for field/attribute ${path}. ${message}`);
}

/** `PUT /flavors/{id}/os-extra_specs/{key}`: exactly one spec, named as the URL's key. */
export function parseExtraSpecUpdate(body: unknown, key: string): Record<string, string> {
  if (!isObj(body)) throw badRequest(`${repr(body)} is not of type 'object'`);
  const specs = parseExtraSpecs(undefined, body);
  const n = Object.keys(body).length;
  if (n < 1) throw badRequest(`${repr(body)} does not have enough properties`);
  if (n > 1) throw badRequest(`${repr(body)} has too many properties`);
  if (!Object.hasOwn(specs, key)) throw badRequest('Request body and URI mismatch');
  return specs;
}

/** `addTenantAccess` / `removeTenantAccess`: `{"tenant": "<project>"}`. */
export function parseTenantAccess(body: unknown, action: 'addTenantAccess' | 'removeTenantAccess'): string {
  const a = rootObject(body, action);
  const t = a.tenant;
  if (t !== undefined) {
    if (typeof t !== 'string') throw typeError('tenant', t, ['string']);
    if (t.length < 1) throw invalidInput('tenant', t, `${repr(t)} is too short`);
    if (t.length > 255) throw invalidInput('tenant', t, `${repr(t)} is too long`);
  }
  required(action, a, ['tenant']);
  onlyKeys(action, a, ['tenant']);
  return t as string;
}
