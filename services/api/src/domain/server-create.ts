import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';
import { invalidName, isNovaBoolean, isNovaName, novaBoolean, UUID } from './nova-formats';
import { invalidInput, notOfType } from './server-create-errors';
import { checkBlockDeviceMappings } from './server-create-bdm';
import { checkServerOptions, serverKeys } from './server-create-options';
import { hintsOf } from './server-hints';

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

/**
 * Most servers one request may create. Nova's bound is the instances quota (10 by default);
 * there are no quotas here, so this keeps one request from asking for millions of rows.
 */
export const MAX_SERVERS_PER_REQUEST = 1000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const ROOT_KEYS = ['server', 'os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints'];

const additional = (path: string, extra: readonly string[]): Error =>
  badRequest(
    `Invalid input for field/attribute ${path}. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
  );

function countOf(server: Obj, key: 'min_count' | 'max_count'): number | undefined {
  const v = server[key];
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw invalidInput(key, v, `${JSON.stringify(v)} is not of type 'integer', 'string'`);
  if (n < 1) throw invalidInput(key, v, `${n} is less than the minimum of 1`);
  if (n > MAX_SERVERS_PER_REQUEST) throw invalidInput(key, v, `${n} is greater than the maximum of ${MAX_SERVERS_PER_REQUEST}`);
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
  if (!Array.isArray(v)) throw invalidInput('networks', v, `${JSON.stringify(v)} is not valid under any of the given schemas`);
  throw badRequest(
    'Networking is not available in this deployment (no Neutron): use "networks": "none" or "auto" (microversion 2.37 or later).',
  );
}

function nameOf(server: Obj, key: 'name' | 'availability_zone'): string {
  const name = server[key];
  if (typeof name !== 'string') throw notOfType(key, name, 'string');
  if (name.length < 1 || name.length > 255) throw invalidInput(key, name, 'must be 1-255 characters');
  if (!isNovaName(name) || (key === 'availability_zone' && name.includes(':'))) throw invalidName();
  return name;
}

function checkKeys(body: Obj, version: Microversion): Obj {
  if (!isObj(body.server)) throw invalidInput('root', body, "'server' is a required property");
  const rootExtra = Object.keys(body).filter((k) => !ROOT_KEYS.includes(k));
  if (rootExtra.length > 0) throw additional('root', rootExtra);
  const known = serverKeys(version);
  const extra = Object.keys(body.server).filter((k) => !known.includes(k));
  if (extra.length > 0) throw additional('server', extra);
  if (body.server.name === undefined) throw invalidInput('server', body.server, "'name' is a required property");
  return body.server;
}

/**
 * Validates a `POST /servers` body as Nova's schema and create handler do (400 with Nova's
 * messages; every check before any write). Pure.
 */
export function parseCreateServer(body: unknown, version: Microversion): CreateServerInput {
  if (!isObj(body)) throw invalidInput('root', body, "'server' is a required property");
  const server = checkKeys(body, version);
  const name = nameOf(server, 'name');
  const az = server.availability_zone === undefined ? undefined : nameOf(server, 'availability_zone');
  const minCount = countOf(server, 'min_count') ?? 1;
  const maxCount = countOf(server, 'max_count') ?? minCount;
  if (minCount > maxCount) throw badRequest('min_count must be <= max_count');
  const rri = server.return_reservation_id === undefined ? false : server.return_reservation_id;
  if (!isNovaBoolean(rri)) throw invalidInput('return_reservation_id', rri, `${JSON.stringify(rri)} is not of type 'boolean'`);
  checkServerOptions(server);
  checkBlockDeviceMappings(server.block_device_mapping_v2, version);
  const { hints, group } = hintsOf(body);
  return {
    name,
    flavorRef: refOf(server, 'flavorRef'),
    imageRef: refOf(server, 'imageRef'),
    availabilityZone: az,
    minCount,
    maxCount,
    returnReservationId: novaBoolean(rri as boolean | string),
    networks: networksOf(server, version),
    schedulerHints: hints,
    group,
  };
}

/** Nova's multi-create display names: `name-1`, `name-2`, ... when more than one. Pure. */
export function displayNames(name: string, count: number): string[] {
  return count === 1 ? [name] : Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
}
