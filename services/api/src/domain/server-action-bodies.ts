import {
  actionObject,
  booleanParam,
  enumParam,
  fqdn,
  isObj,
  nameParam,
  onlyKeys,
  repr,
  required,
  stringParam,
  type Obj,
} from './action-schema';
import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';
import { invalidInput } from './server-create-errors';
import type { ParsedServerAction } from './server-action';

// Nova's body schemas of the server actions, per microversion (nova/api/openstack/compute/schemas:
// servers.py reboot/resize, migrate_server.py, evacuate.py, shelve.py; rebuild is in rebuild-body.ts)
// and the controllers' own checks on the body. Each parser gets the whole body (one key). Pure.

/** Actions Nova reads no body of (no schema: `{"os-stop": null}`, `{"shelve": {}}`, ... all do). */
export const noBody = (action: ParsedServerAction['action'], verb: string) => (): ParsedServerAction => ({ action, verb });

/** `reboot`: `{"type": "SOFT"|"HARD"}` (any case Nova lists), required. */
export function parseReboot(body: Obj): ParsedServerAction {
  const o = actionObject(body, 'reboot') ?? {};
  onlyKeys('reboot', o, ['type']);
  required('reboot', o, ['type']);
  const type = enumParam('type', o.type, ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']);
  return { action: 'reboot', verb: 'reboot', rebootType: type.toUpperCase() === 'HARD' ? 'HARD' : 'SOFT' };
}

/** `resize`: `flavorRef` (string or integer, an id or a link) required; `OS-DCF:diskConfig` accepted. */
export function parseResize(body: Obj): ParsedServerAction {
  const o = actionObject(body, 'resize') ?? {};
  onlyKeys('resize', o, ['flavorRef', 'OS-DCF:diskConfig']);
  required('resize', o, ['flavorRef']);
  const ref = o.flavorRef;
  if (typeof ref !== 'string' && !(typeof ref === 'number' && Number.isInteger(ref)))
    throw invalidInput('flavorRef', ref, `${repr(ref)} is not of type 'string', 'integer'`);
  if (typeof ref === 'string' && ref.length < 1) throw invalidInput('flavorRef', ref, `${repr(ref)} is too short`);
  if (o['OS-DCF:diskConfig'] !== undefined) enumParam('OS-DCF:diskConfig', o['OS-DCF:diskConfig'], ['AUTO', 'MANUAL']);
  // NOTE: Nova takes the last path segment of a link (common.get_id_from_href).
  const id = String(ref).replace(/\/+$/, '').split('/').pop() ?? String(ref);
  return { action: 'resize', verb: 'resize', flavorRef: id };
}

/** `migrate`: no schema before 2.56; from 2.56 null or `{"host": fqdn|null}`. */
export function parseMigrate(body: Obj, v: Microversion): ParsedServerAction {
  if (!atLeast(v, 56)) return { action: 'migrate', verb: 'migrate' };
  const o = actionObject(body, 'migrate', true);
  if (o === undefined) return { action: 'migrate', verb: 'migrate' };
  onlyKeys('migrate', o, ['host']);
  const host = o.host === undefined ? undefined : fqdn('host', o.host, true);
  return { action: 'migrate', verb: 'migrate', host };
}

/** os-migrateLive's `block_migration`: a boolean before 2.25, a boolean or "auto" from 2.25. */
function blockMigrationOf(v: unknown, version: Microversion): 'auto' | 'true' | 'false' {
  if (atLeast(version, 25) && v === 'auto') return 'auto';
  return booleanParam('block_migration', v) ? 'true' : 'false';
}

/** Nova's `force` (2.29/2.30-2.67): a boolean; `true` needs a host (Nova's 400). Whether the move is forced. */
function forceOf(o: Obj, withForce: boolean, host: string | undefined): boolean {
  if (!withForce || o.force === undefined || !booleanParam('force', o.force)) return false;
  if (host === undefined) throw badRequest("Can't force to a non-provided destination");
  return true;
}

/**
 * `os-migrateLive`: `host` (fqdn or null) and `block_migration` required; `disk_over_commit`
 * required before 2.25 (and ignored, as by Nova's scheduler-driven checks); `force` 2.30-2.67
 * (`true` without a host is Nova's 400; with a host the scheduler is bypassed: that host is
 * claimed directly, after Nova's conductor checks); `force` is an unknown key from 2.68.
 */
export function parseMigrateLive(body: Obj, v: Microversion): ParsedServerAction {
  const o = actionObject(body, 'os-migrateLive') ?? {};
  const legacy = !atLeast(v, 25);
  const withForce = atLeast(v, 30) && !atLeast(v, 68);
  onlyKeys('os-migrateLive', o, ['block_migration', 'host', ...(legacy ? ['disk_over_commit'] : []), ...(withForce ? ['force'] : [])]);
  required('os-migrateLive', o, legacy ? ['block_migration', 'disk_over_commit', 'host'] : ['block_migration', 'host']);
  const blockMigration = blockMigrationOf(o.block_migration, v);
  if (legacy) booleanParam('disk_over_commit', o.disk_over_commit);
  const host = fqdn('host', o.host, true);
  const force = forceOf(o, withForce, host);
  return { action: 'live-migration', verb: 'os-migrateLive', host, blockMigration, ...(force ? { force } : {}) };
}

/**
 * `evacuate`: `host` (fqdn), `adminPass`; `onSharedStorage` required before 2.14 (and a new
 * password on shared storage is Nova's 400); `force` 2.29-2.67 as os-migrateLive's (a forced
 * evacuation claims the host directly, with no check but placement's capacity, as Nova's).
 */
export function parseEvacuate(body: Obj, v: Microversion): ParsedServerAction {
  const o = actionObject(body, 'evacuate') ?? {};
  const legacy = !atLeast(v, 14);
  const withForce = atLeast(v, 29) && !atLeast(v, 68);
  onlyKeys('evacuate', o, ['host', 'adminPass', ...(legacy ? ['onSharedStorage'] : []), ...(withForce ? ['force'] : [])]);
  if (legacy) required('evacuate', o, ['onSharedStorage']);
  const host = o.host === undefined ? undefined : fqdn('host', o.host);
  const adminPass = o.adminPass === undefined ? undefined : stringParam('adminPass', o.adminPass);
  const onSharedStorage = legacy ? booleanParam('onSharedStorage', o.onSharedStorage) : undefined;
  const force = forceOf(o, withForce, host);
  if (onSharedStorage === true && adminPass !== undefined) throw badRequest("admin password can't be changed on existing disk");
  return { action: 'evacuate', verb: 'evacuate', host, adminPass, onSharedStorage, ...(force ? { force } : {}) };
}

/**
 * `unshelve`: no schema before 2.77; 2.77-2.90 null or `{"availability_zone": name}` (required);
 * from 2.91 null or `{"availability_zone": string|null, "host": string}` (null az: any zone).
 */
export function parseUnshelve(body: Obj, v: Microversion): ParsedServerAction {
  const base: ParsedServerAction = { action: 'unshelve', verb: 'unshelve' };
  if (!atLeast(v, 77) || body.unshelve === null) return base;
  if (!isObj(body.unshelve)) throw invalidInput('unshelve', body.unshelve, `${repr(body.unshelve)} is not of type 'object', 'null'`);
  const o = body.unshelve;
  if (!atLeast(v, 91)) {
    onlyKeys('unshelve', o, ['availability_zone']);
    required('unshelve', o, ['availability_zone']);
    return { ...base, availabilityZone: nameParam('availability_zone', o.availability_zone) };
  }
  onlyKeys('unshelve', o, ['availability_zone', 'host']);
  const az =
    o.availability_zone === undefined || o.availability_zone === null ? undefined : stringParam('availability_zone', o.availability_zone);
  const host = o.host === undefined ? undefined : stringParam('host', o.host);
  return { ...base, availabilityZone: az, host };
}
