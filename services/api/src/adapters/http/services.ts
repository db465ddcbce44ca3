import type { ServiceRecord } from '@cellsched/cell-db';
import { listHostMappings, type CellMapping } from '@cellsched/api-db';
import { getServiceById, listMigrationsByFilters } from '@cellsched/cell-db';
import { badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { isNovaBoolean, novaBoolean } from '../../domain/nova-formats';
import { inCell } from '../server-action-checks';
import { gatherHosts, isUp, zoneResolver } from '../cell-hosts';
import { plainBody, queryValue, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';
import { deleteService, untilApplied } from './service-delete';

interface Located {
  service: ServiceRecord;
  cell: CellMapping;
}
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const iso = (d: Date): string => d.toISOString().replace('Z', '000');

function view(s: ServiceRecord, req: ApiRequest, zone: (h: string) => string): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: atLeast(req.version, 53) ? s.uuid : s.id,
    binary: s.binary,
    host: s.host,
    zone: s.binary === 'nova-compute' ? zone(s.host) : 'internal',
    status: s.disabled ? 'disabled' : 'enabled',
    state: isUp(s) ? 'up' : 'down',
    updated_at: s.lastSeenUp === null ? null : iso(s.lastSeenUp),
    disabled_reason: s.disabledReason,
  };
  if (atLeast(req.version, 11)) v.forced_down = s.forcedDown;
  return v;
}

async function locate(deps: ApiDeps, match: (s: ServiceRecord) => boolean): Promise<Located[]> {
  const { cells } = await gatherHosts(deps);
  return cells.flatMap((c) => c.services.filter(match).map((service) => ({ service, cell: c.cell })));
}

/**
 * Nova's minimal services of the cells that did not answer (2.69, `_service_get_all_cells`): one
 * nova-compute per host mapping of the cell, with only its binary, host and status UNKNOWN.
 */
async function downCellServices(deps: ApiDeps, down: readonly string[]): Promise<Record<string, unknown>[]> {
  const mapped = await Promise.all(down.map((cellUuid) => listHostMappings(deps.apiDb, { cellUuid })));
  return mapped.flat().map((m) => ({ binary: 'nova-compute', host: m.host, status: 'UNKNOWN' }));
}

async function list(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const host = queryValue(req, 'host') || undefined;
  const binary = queryValue(req, 'binary') || undefined;
  const { cells, down } = await gatherHosts(deps);
  const zone = await zoneResolver(deps);
  const partial = atLeast(req.version, 69) ? await downCellServices(deps, down) : [];
  const services = [...cells.flatMap((c) => c.services).map((s) => view(s, req, zone)), ...partial].filter(
    (s) => (host === undefined || s.host === host) && (binary === undefined || s.binary === binary),
  );
  return { status: 200, body: { services } };
}

/** A change of a service: `disabled` (with its reason) and/or `forcedDown`; an absent part is left as it is. */
interface ServiceChange {
  readonly disabled?: { readonly value: boolean; readonly reason: string | null };
  readonly forcedDown?: boolean;
}

/** Whether the service row shows the change (a reason compared as Nova stores it: none is null). */
function shows(s: ServiceRecord, change: ServiceChange): boolean {
  const d = change.disabled;
  return (
    (change.forcedDown === undefined || s.forcedDown === change.forcedDown) &&
    (d === undefined || (s.disabled === d.value && (s.disabledReason || null) === (d.reason || null)))
  );
}

/**
 * Sends the change to the super-conductor (the API never writes a cell DB), then waits (bounded)
 * until the service's cell shows it: Nova writes it synchronously, so a client that forces a host
 * down and evacuates at once must find it down. Answers the row as the cell has it. Not shown
 * within the bound (another change won, or the super-conductor is behind): 503, the cast still
 * queued (durable, idempotent) and applied when the super-conductor gets to it.
 */
async function applyUpdate(req: ApiRequest, deps: ApiDeps, at: Located, change: ServiceChange): Promise<ServiceRecord> {
  const d = change.disabled;
  await deps.conductor.updateService(
    {
      cellUuid: at.cell.uuid,
      host: at.service.host,
      binary: at.service.binary,
      disabled: d?.value ?? at.service.disabled,
      disabledReason: (d === undefined ? at.service.disabledReason : d.reason) ?? '',
      requestId: req.requestId,
      forcedDown: change.forcedDown,
      onlyForcedDown: d === undefined ? true : undefined,
    },
    { timeoutMs: deps.castTimeoutMs },
  );
  const db = deps.cells.db(at.cell);
  return untilApplied(deps, at.service, 'update', 'applied', async () => {
    const now = await getServiceById(db, at.service.uuid);
    if (now === undefined) throw notFound(`Service ${at.service.uuid} could not be found.`);
    return shows(now, change) ? now : undefined;
  });
}

/** Nova's `disabled_reason`: a string of 1-255 characters. */
function reasonOf(b: Record<string, unknown>): string | undefined {
  const reason = b.disabled_reason;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length < 1 || reason.length > 255)) {
    throw badRequest(
      `Invalid input for field/attribute disabled_reason. Value: ${JSON.stringify(reason)}. must be a string of 1-255 characters`,
    );
  }
  return reason;
}

/** Nova's `forced_down` (parameter_types.boolean), or undefined when absent. */
function forcedDownOf(b: Record<string, unknown>): boolean | undefined {
  if (b.forced_down === undefined) return undefined;
  if (!isNovaBoolean(b.forced_down))
    throw badRequest(
      `Invalid input for field/attribute forced_down. Value: ${JSON.stringify(b.forced_down)}. ${JSON.stringify(b.forced_down)} is not one of the allowed boolean values`,
    );
  return novaBoolean(b.forced_down as boolean | string);
}

/** Nova's `_update`: only nova-compute services may be enabled, disabled or forced down. */
function assertCompute(binary: string): void {
  if (binary !== 'nova-compute')
    throw badRequest(`Updating a ${binary} service is not supported. Only nova-compute services can be updated.`);
}

/**
 * Nova's `_check_for_evacuations`: a compute may not be forced back up while evacuations from it
 * are `done` (its restart has not cleaned them up yet: it would come back with the evacuated guests).
 */
async function assertNoDoneEvacuations(deps: ApiDeps, at: Located): Promise<void> {
  const done = await inCell(deps, at.cell, `host ${at.service.host}`, (db) =>
    listMigrationsByFilters(db, { sourceCompute: at.service.host, statuses: ['done'], migrationType: 'evacuation', limit: 1 }),
  );
  if (done.length > 0) {
    throw badRequest(
      `Unable to force up host ${at.service.host} as \`done\` evacuation migration records remain associated with the host. ` +
        'Ensure the compute service has been restarted, allowing these records to move to `completed` before retrying this request.',
    );
  }
}

function legacyBody(req: ApiRequest): { host: string; binary: string; reason: string | undefined; forcedDown: boolean | undefined } {
  const b = plainBody(req, ['host', 'binary', 'disabled_reason', ...(atLeast(req.version, 11) ? ['forced_down'] : [])]);
  if (typeof b.host !== 'string' || typeof b.binary !== 'string')
    throw badRequest("Invalid input for field/attribute body. 'host' and 'binary' are required strings");
  if (!/^[a-zA-Z0-9._-]{1,255}$/.test(b.host))
    throw badRequest(`Invalid input for field/attribute host. Value: ${b.host}. must be 1-255 letters, digits, '-', '.' or '_'`);
  if (b.binary.length < 1 || b.binary.length > 255)
    throw badRequest(`Invalid input for field/attribute binary. Value: ${b.binary}. must be a string of 1-255 characters`);
  return { host: b.host, binary: b.binary, reason: reasonOf(b), forcedDown: forcedDownOf(b) };
}

/** `PUT /os-services/{enable,disable,disable-log-reason}` (< 2.53) and `force-down` (2.11-2.52), by host and binary. */
async function legacyUpdate(req: ApiRequest, deps: ApiDeps, action: string): Promise<ApiReply> {
  const actions = ['enable', 'disable', 'disable-log-reason', ...(atLeast(req.version, 11) ? ['force-down'] : [])];
  if (!actions.includes(action)) throw notFound('Unknown action');
  const { host, binary, reason, forcedDown } = legacyBody(req);
  if (action === 'disable-log-reason' && reason === undefined) throw badRequest('Missing disabled reason field');
  if (action === 'force-down' && forcedDown === undefined) throw badRequest('Missing forced_down field');
  assertCompute(binary);
  const [at] = await locate(deps, (s) => s.host === host && s.binary === binary);
  if (at === undefined) throw notFound(`Host '${host}' is not mapped to any cell`);
  if (action === 'force-down') {
    if (forcedDown === false) await assertNoDoneEvacuations(deps, at);
    const now = await applyUpdate(req, deps, at, { forcedDown });
    return { status: 200, body: { service: { host, binary, forced_down: now.forcedDown } } };
  }
  const disabled = action !== 'enable';
  await applyUpdate(req, deps, at, { disabled: { value: disabled, reason: disabled ? (reason ?? null) : null } });
  const service: Record<string, unknown> = { host, binary, status: disabled ? 'disabled' : 'enabled' };
  if (action === 'disable-log-reason') service.disabled_reason = reason;
  return { status: 200, body: { service } };
}

/** The 2.53 body's status change, or undefined (Nova's checks on `status` and `disabled_reason`). */
function statusChange(b: Record<string, unknown>): ServiceChange['disabled'] {
  const reason = reasonOf(b);
  if (b.status === undefined) return undefined;
  if (b.status !== 'enabled' && b.status !== 'disabled')
    throw badRequest("Invalid input for field/attribute status. must be 'enabled' or 'disabled'");
  if (b.status === 'enabled' && reason !== undefined) throw badRequest("Specifying 'disabled_reason' with status 'enabled' is invalid.");
  return { value: b.status === 'disabled', reason: b.status === 'disabled' ? (reason ?? null) : null };
}

/** `PUT /os-services/{service_uuid}` (2.53+): `status` (+ `disabled_reason`) and/or `forced_down`; answers the updated service. */
async function update(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = req.params.id ?? '';
  if (!atLeast(req.version, 53)) return legacyUpdate(req, deps, id);
  if (!UUID.test(id)) throw badRequest(`Invalid uuid ${id}`);
  const b = plainBody(req, ['status', 'disabled_reason', 'forced_down']);
  const disabled = statusChange(b);
  const forcedDown = forcedDownOf(b);
  const hex = id.replaceAll('-', '').toLowerCase();
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const [at] = await locate(deps, (s) => s.uuid === uuid);
  if (at === undefined) throw notFound(`Service ${id} could not be found.`);
  assertCompute(at.service.binary);
  if (forcedDown === false) await assertNoDoneEvacuations(deps, at);
  if (disabled === undefined && forcedDown === undefined)
    throw badRequest("No updates were requested. Fields 'status' or 'forced_down' should be specified.");
  const updated = await applyUpdate(req, deps, at, { disabled, forcedDown });
  return { status: 200, body: { service: view(updated, req, await zoneResolver(deps)) } };
}

/** `/v2.1/os-services` across every cell (admin only); updates and deletes are cast to the super-conductor, answered once applied. */
export const SERVICE_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-services', handler: list, adminPolicy: 'os_compute_api:os-services:list' },
  { method: 'PUT', path: '/v2.1/os-services/:id', handler: update, adminPolicy: 'os_compute_api:os-services:update' },
  { method: 'DELETE', path: '/v2.1/os-services/:id', handler: deleteService, adminPolicy: 'os_compute_api:os-services:delete' },
];
