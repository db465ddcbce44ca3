import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';

/** A validated `POST /servers` body (before any database lookup). */
export interface CreateServerInput {
  readonly name: string;
  readonly flavorRef: string;
  readonly imageRef: string;
  readonly availabilityZone: string | undefined;
  readonly minCount: number;
  readonly maxCount: number;
  readonly returnReservationId: boolean;
  /** `none`, `auto`, or undefined (below 2.37 when absent). */
  readonly networks: 'none' | 'auto' | undefined;
  /** Scheduler hints, values flattened to strings (lists joined by commas). */
  readonly schedulerHints: Readonly<Record<string, string>>;
  readonly group: string | undefined;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SERVER_KEYS = new Set(['name', 'imageRef', 'flavorRef', 'availability_zone', 'min_count', 'max_count', 'return_reservation_id',
  'networks', 'metadata', 'security_groups', 'key_name', 'user_data', 'config_drive', 'description', 'adminPass', 'OS-DCF:diskConfig', 'trusted_image_certificates']);

/** Nova's jsonschema message shape. */
export const invalidInput = (path: string, value: unknown, why: string): Error =>
  badRequest(`Invalid input for field/attribute ${path}. Value: ${typeof value === 'string' ? value : JSON.stringify(value)}. ${why}`);

function countOf(server: Obj, key: 'min_count' | 'max_count'): number | undefined {
  const v = server[key];
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw invalidInput(key, v, `${JSON.stringify(v)} is not of type 'integer', 'string'`);
  if (n < 1) throw invalidInput(key, v, `${n} is less than the minimum of 1`);
  return n;
}

function refOf(server: Obj, key: 'flavorRef' | 'imageRef'): string {
  const v = server[key];
  if (v === undefined) throw invalidInput('server', server, `'${key}' is a required property`);
  if (typeof v === 'number' && key === 'flavorRef' && Number.isInteger(v)) return String(v);
  if (typeof v !== 'string' || v.trim() === '') throw invalidInput(key, v, `${JSON.stringify(v)} is not a valid ${key}`);
  // NOTE: Nova accepts a URL and uses its last path segment (common.get_id_from_href).
  const id = v.replace(/\/+$/, '').split('/').pop() ?? v;
  if (key === 'imageRef' && !UUID.test(id)) throw badRequest('Invalid imageRef provided.');
  return id;
}

function networksOf(server: Obj, version: Microversion): 'none' | 'auto' | undefined {
  const v = server.networks;
  if (v === undefined) {
    if (atLeast(version, 37)) throw invalidInput('server', server, "'networks' is a required property");
    return undefined;
  }
  if (v === 'none' || v === 'auto') {
    if (!atLeast(version, 37)) throw invalidInput('networks', v, `'${v}' is not of type 'array'`);
    return v;
  }
  if (Array.isArray(v) && v.length === 0) return undefined;
  throw badRequest('Networking is not available in this deployment (no Neutron): use "networks": "none" or "auto" (microversion 2.37 or later).');
}

function hintsOf(body: Obj): { hints: Record<string, string>; group: string | undefined } {
  const raw = body['os:scheduler_hints'] ?? body['OS-SCH-HNT:scheduler_hints'];
  if (raw === undefined) return { hints: {}, group: undefined };
  if (!isObj(raw)) throw invalidInput('os:scheduler_hints', raw, `${JSON.stringify(raw)} is not of type 'object'`);
  const hints: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v === 'string') hints[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) hints[k] = v.join(',');
    else throw invalidInput(`os:scheduler_hints.${k}`, v, `${JSON.stringify(v)} is not of type 'string', 'array'`);
  }
  const group = hints.group;
  if (group !== undefined && !UUID.test(group)) throw invalidInput('os:scheduler_hints.group', group, `'${group}' is not a 'uuid'`);
  return { hints, group: group?.toLowerCase() };
}

function nameOf(server: Obj): string {
  const name = server.name;
  if (name === undefined) throw invalidInput('server', server, "'name' is a required property");
  if (typeof name !== 'string') throw invalidInput('name', name, `${JSON.stringify(name)} is not of type 'string'`);
  if (name.length < 1 || name.length > 255 || name.trim() !== name) throw invalidInput('name', name, 'Invalid input: must be 1-255 characters without leading or trailing whitespace');
  return name;
}

/**
 * Validates a `POST /servers` body as Nova's schema and create handler do (400 with Nova's
 * messages; every check before any write). Pure.
 */
export function parseCreateServer(body: unknown, version: Microversion): CreateServerInput {
  if (!isObj(body) || !isObj(body.server)) throw invalidInput('root', body, "'server' is a required property");
  const server = body.server;
  const extra = Object.keys(server).filter((k) => !SERVER_KEYS.has(k));
  if (extra.length > 0) throw badRequest(`Invalid input for field/attribute server. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`);
  if (server.trusted_image_certificates !== undefined && server.trusted_image_certificates !== null) {
    throw badRequest('Image certificate validation is not supported by this deployment: trusted_image_certificates must be null or absent.');
  }
  const name = nameOf(server);
  const az = server.availability_zone;
  if (az !== undefined && (typeof az !== 'string' || az === '')) throw invalidInput('availability_zone', az, 'must be a non-empty string');
  const minCount = countOf(server, 'min_count') ?? 1;
  const maxCount = countOf(server, 'max_count') ?? minCount;
  if (minCount > maxCount) throw badRequest('min_count must be <= max_count');
  const rri = server.return_reservation_id ?? false;
  if (typeof rri !== 'boolean') throw invalidInput('return_reservation_id', rri, `${JSON.stringify(rri)} is not of type 'boolean'`);
  const { hints, group } = hintsOf(body);
  return {
    name, flavorRef: refOf(server, 'flavorRef'), imageRef: refOf(server, 'imageRef'), availabilityZone: az, minCount, maxCount,
    returnReservationId: rri, networks: networksOf(server, version), schedulerHints: hints, group,
  };
}

/** Nova's multi-create display names: `name-1`, `name-2`, ... when more than one. Pure. */
export function displayNames(name: string, count: number): string[] {
  return count === 1 ? [name] : Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
}
