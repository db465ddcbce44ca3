import type { ServiceRecord } from '@cellsched/cell-db';
import type { CellMapping } from '@cellsched/api-db';
import { badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { downCellsHeader, gatherHosts, isUp, zoneResolver } from '../cell-hosts';
import { plainBody, queryValue, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';
import { deleteService } from './service-delete';

interface Located { service: ServiceRecord; cell: CellMapping }
const iso = (d: Date): string => d.toISOString().replace('Z', '000');

function view(s: ServiceRecord, req: ApiRequest, zone: (h: string) => string, override?: { disabled: boolean; reason: string | null }): Record<string, unknown> {
  const disabled = override?.disabled ?? s.disabled;
  const v: Record<string, unknown> = {
    id: atLeast(req.version, 53) ? s.uuid : s.id, binary: s.binary, host: s.host, zone: s.binary === 'nova-compute' ? zone(s.host) : 'internal',
    status: disabled ? 'disabled' : 'enabled', state: isUp(s) ? 'up' : 'down', updated_at: s.lastSeenUp === null ? null : iso(s.lastSeenUp),
    disabled_reason: override === undefined ? s.disabledReason : override.reason,
  };
  if (atLeast(req.version, 11)) v.forced_down = s.forcedDown;
  return v;
}

async function locate(deps: ApiDeps, match: (s: ServiceRecord) => boolean): Promise<Located[]> {
  const { cells } = await gatherHosts(deps);
  return cells.flatMap((c) => c.services.filter(match).map((service) => ({ service, cell: c.cell })));
}

async function list(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const host = queryValue(req, 'host');
  const binary = queryValue(req, 'binary');
  const { cells, down } = await gatherHosts(deps);
  const zone = await zoneResolver(deps);
  const services = cells.flatMap((c) => c.services).filter((s) => (host === undefined || s.host === host) && (binary === undefined || s.binary === binary));
  return { status: 200, body: { services: services.map((s) => view(s, req, zone)) }, headers: downCellsHeader(down) };
}

/** Sends the change to the super-conductor (the API never writes a cell DB); applied asynchronously, idempotent. */
async function castUpdate(req: ApiRequest, deps: ApiDeps, at: Located, disabled: boolean, reason: string | null): Promise<void> {
  await deps.conductor.updateService({
    cellUuid: at.cell.uuid, host: at.service.host, binary: at.service.binary, disabled, disabledReason: reason ?? '', requestId: req.requestId,
  }, { timeoutMs: deps.castTimeoutMs });
}

const FORCED_DOWN = 'forced_down is not supported by this deployment (the servicegroup heartbeat decides)';

/** Nova's `disabled_reason`: a string of 1-255 characters. */
function reasonOf(b: Record<string, unknown>): string | undefined {
  const reason = b.disabled_reason;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length < 1 || reason.length > 255)) {
    throw badRequest(`Invalid input for field/attribute disabled_reason. Value: ${JSON.stringify(reason)}. must be a string of 1-255 characters`);
  }
  return reason;
}

function legacyBody(req: ApiRequest): { host: string; binary: string; reason: string | undefined } {
  const b = plainBody(req, ['host', 'binary', 'disabled_reason', ...(atLeast(req.version, 11) ? ['forced_down'] : [])]);
  if (typeof b.host !== 'string' || typeof b.binary !== 'string') throw badRequest("Invalid input for field/attribute body. 'host' and 'binary' are required strings");
  if (!/^[a-zA-Z0-9._-]{1,255}$/.test(b.host)) throw badRequest(`Invalid input for field/attribute host. Value: ${b.host}. must be 1-255 letters, digits, '-', '.' or '_'`);
  if (b.binary.length < 1 || b.binary.length > 255) throw badRequest(`Invalid input for field/attribute binary. Value: ${b.binary}. must be a string of 1-255 characters`);
  if (b.forced_down !== undefined) throw badRequest(FORCED_DOWN);
  return { host: b.host, binary: b.binary, reason: reasonOf(b) };
}

async function legacyUpdate(req: ApiRequest, deps: ApiDeps, action: string): Promise<ApiReply> {
  if (!['enable', 'disable', 'disable-log-reason'].includes(action)) throw notFound('Unknown action');
  const { host, binary, reason } = legacyBody(req);
  if (action === 'disable-log-reason' && reason === undefined) throw badRequest('Missing disabled reason field');
  const [at] = await locate(deps, (s) => s.host === host && s.binary === binary);
  if (at === undefined) throw notFound(`Host '${host}' is not mapped to any cell`);
  const disabled = action !== 'enable';
  await castUpdate(req, deps, at, disabled, disabled ? reason ?? null : null);
  const service: Record<string, unknown> = { host, binary, status: disabled ? 'disabled' : 'enabled' };
  if (action === 'disable-log-reason') service.disabled_reason = reason;
  return { status: 200, body: { service } };
}

async function update(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = req.params.id ?? '';
  if (!atLeast(req.version, 53)) return legacyUpdate(req, deps, id);
  const b = plainBody(req, ['status', 'disabled_reason', 'forced_down']);
  if (b.forced_down !== undefined) throw badRequest(FORCED_DOWN);
  if (b.status !== 'enabled' && b.status !== 'disabled') throw badRequest("Invalid input for field/attribute status. must be 'enabled' or 'disabled'");
  const reason = reasonOf(b);
  if (reason !== undefined && b.status !== 'disabled') throw badRequest('Specifying a disabled reason is only allowed when disabling a service.');
  const [at] = await locate(deps, (s) => s.uuid === id);
  if (at === undefined) throw notFound(`Service ${id} could not be found.`);
  const disabled = b.status === 'disabled';
  await castUpdate(req, deps, at, disabled, reason ?? null);
  return { status: 200, body: { service: view(at.service, req, await zoneResolver(deps), { disabled, reason: reason ?? null }) } };
}

/** `/v2.1/os-services` across every cell (admin only); updates and deletes are cast to the super-conductor. */
export const SERVICE_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-services', handler: list, adminPolicy: 'os_compute_api:os-services:list' },
  { method: 'PUT', path: '/v2.1/os-services/:id', handler: update, adminPolicy: 'os_compute_api:os-services:update' },
  { method: 'DELETE', path: '/v2.1/os-services/:id', handler: deleteService, adminPolicy: 'os_compute_api:os-services:delete' },
];
