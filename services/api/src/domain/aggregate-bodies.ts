import { actionObject, fqdn, isObj, nameParam, onlyKeys, repr, required, typeError, type Obj } from './action-schema';
import { badRequest } from './errors';
import { rootObject } from './flavor-bodies';
import { isPrintable, METADATA_KEY } from './nova-formats';
import { invalidInput } from './server-create-errors';

// The bodies of os-aggregates, judged as Nova's schemas (nova/api/openstack/compute/schemas/
// aggregates.py) with jsonschema's messages, in the order jsonschema reports them. Pure.

/** `POST /os-aggregates`: the name and the optional zone, both trimmed as Nova's `normalize_name`. */
export interface AggregateCreate {
  readonly name: string;
  readonly availabilityZone: string | undefined;
}

/** `PUT /os-aggregates/{id}`: at least one of them; `availabilityZone` null asks to clear it (Nova refuses that later). */
export interface AggregateUpdate {
  readonly name?: string;
  readonly availabilityZone?: string | null;
}

/** Nova's `az_name` format: printable but ':', not starting or ending with whitespace. */
const AZ_EDGE = /^[\p{C}\p{Z}]|[\p{C}\p{Z}]$/u;
const isAzName = (s: string): boolean => isPrintable(s) && !s.includes(':') && !AZ_EDGE.test(s);

/** `{'oneOf': [az_name, null]}`: any failure is jsonschema's oneOf message. */
function zoneParam(v: unknown): string | null {
  if (v === null) return null;
  if (typeof v === 'string' && v.length >= 1 && v.length <= 255 && isAzName(v)) return v;
  throw invalidInput('availability_zone', v, `${repr(v)} is not valid under any of the given schemas`);
}

/** Nova's `name_with_leading_trailing_spaces` (the update's name): printable, at least one non-space character. */
function spacedName(v: unknown): string {
  if (typeof v !== 'string') throw typeError('name', v, ['string']);
  if (!isPrintable(v) || !/[^\p{Z}]/u.test(v)) {
    throw badRequest("An invalid 'name' value was provided. The name must be: printable characters with at least one non space character");
  }
  if (v.length < 1) throw invalidInput('name', v, `${repr(v)} is too short`);
  if (v.length > 255) throw invalidInput('name', v, `${repr(v)} is too long`);
  return v;
}

/** Nova's `common.normalize_name`: surrounding whitespace removed. */
const normalize = (s: string): string => s.replace(/^\s+|\s+$/gu, '');

/** `POST /os-aggregates` (2.1 schema). */
export function parseAggregateCreate(body: unknown): AggregateCreate {
  const a = rootObject(body, 'aggregate');
  const name = a.name === undefined ? undefined : nameParam('name', a.name);
  const zone = a.availability_zone === undefined ? null : zoneParam(a.availability_zone);
  required('aggregate', a, ['name']);
  onlyKeys('aggregate', a, ['name', 'availability_zone']);
  return { name: normalize(name as string), availabilityZone: zone === null || zone === '' ? undefined : normalize(zone) };
}

/** `PUT /os-aggregates/{id}` (2.1 schema): name and/or availability_zone. */
export function parseAggregateUpdate(body: unknown): AggregateUpdate {
  const a = rootObject(body, 'aggregate');
  const name = a.name === undefined ? undefined : normalize(spacedName(a.name));
  const zone = a.availability_zone === undefined ? undefined : zoneParam(a.availability_zone);
  onlyKeys('aggregate', a, ['name', 'availability_zone']);
  if (name === undefined && zone === undefined)
    throw invalidInput('aggregate', repr(a), `${repr(a)} is not valid under any of the given schemas`);
  return { ...(name === undefined ? {} : { name }), ...(zone === undefined ? {} : { availabilityZone: zone }) };
}

/** The `host` of `add_host` / `remove_host`. */
export function parseAggregateHost(body: Obj, action: 'add_host' | 'remove_host'): string {
  const o = actionObject(body, action) as Obj;
  const host = o.host === undefined ? undefined : fqdn('host', o.host);
  required(action, o, ['host']);
  onlyKeys(action, o, ['host']);
  return host as string;
}

/** `set_metadata`'s metadata (`parameter_types.metadata_with_null`): null values remove keys. */
export function parseAggregateMetadata(body: Obj): Record<string, string | null> {
  const o = actionObject(body, 'set_metadata') as Obj;
  const m = o.metadata;
  if (m !== undefined) {
    if (!isObj(m)) throw typeError('metadata', m, ['object']);
    for (const [k, v] of Object.entries(m)) {
      if (!METADATA_KEY.test(k)) continue;
      if (v !== null && typeof v !== 'string') throw typeError(k, v, ['string', 'null']);
      if (typeof v === 'string' && v.length > 255) throw invalidInput(k, v, `${repr(v)} is too long`);
    }
    const bad = Object.keys(m).filter((k) => !METADATA_KEY.test(k));
    if (bad.length > 0)
      throw invalidInput(
        'metadata',
        repr(m),
        `Additional properties are not allowed (${bad.map((k) => `'${k}'`).join(', ')} ${bad.length === 1 ? 'was' : 'were'} unexpected)`,
      );
  }
  required('set_metadata', o, ['metadata']);
  onlyKeys('set_metadata', o, ['metadata']);
  // NOTE: fromEntries, so a key such as __proto__ stays an own key.
  return Object.fromEntries(Object.entries(m as Obj).map(([k, v]) => [k, v as string | null]));
}

/** Nova's integer aggregate id in the URL (`utils.validate_integer`, as Python's `int()` reads it), or its 400. */
export function aggregateId(raw: string): number {
  if (!/^\s*[+-]?\d+(_\d+)*\s*$/.test(raw)) throw badRequest('Invalid input received: id must be an integer');
  return Number(raw.trim().replace(/_/g, ''));
}
