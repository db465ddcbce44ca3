import { annotateSpan } from '@cellsched/telemetry';
import { randomPassword } from '../../domain/admin-password';
import { listShowsDownCells } from '../../domain/down-cells';
import { badRequest, forbidden } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { parseCreateServer } from '../../domain/server-create';
import { namePattern } from '../../domain/name-filter';
import { dateTimeParam } from '../../domain/paging';
import { statusFilter } from '../../domain/server-status';
import { links, serverDetail, serverSummary } from '../../domain/server-view';
import { createServers } from '../create-server';
import { deleteServer } from '../delete-server';
import { downCellShow, listServers, readServer, type ListFilter } from '../server-reader';
import { queryFlag, queryValue, queryValues, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

/** Nova's `[api] max_limit`. */
export const MAX_LIMIT = 1000;

async function create(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const input = parseCreateServer(req.body, req.version);
  const created = await createServers(deps, input, req.caller, req.requestId);
  // the create's trace is found by any of its servers' uuids (trace-tail --match UUID)
  annotateSpan({ 'cellsched.instance_uuids': created.uuids.join(','), 'cellsched.reservation_id': created.reservationId });
  const log = { request_id: req.requestId, instance_uuid: created.uuids[0], count: created.uuids.length };
  try {
    await deps.conductor.scheduleAndBuildInstances(created.cast, { timeoutMs: deps.castTimeoutMs });
    deps.log.info(log, 'schedule_and_build_instances cast');
  } catch (err) {
    // NOTE: the rows are committed: the request is accepted whatever happens to the cast.
    deps.log.warn({ ...log, err }, 'schedule_and_build_instances not confirmed; retrying in the background');
    deps.retrier.retry(
      { ...log, rpc_method: 'schedule_and_build_instances' },
      // recast: the first may still arrive, and after this one put the servers in a cell
      () => deps.conductor.scheduleAndBuildInstances({ ...created.cast, recast: true }, { timeoutMs: deps.castTimeoutMs }),
    );
  }
  if (input.returnReservationId) return { status: 202, body: { reservation_id: created.reservationId } };
  const id = created.uuids[0] ?? '';
  const server = {
    id,
    links: links(req, 'servers', id),
    'OS-DCF:diskConfig': 'MANUAL',
    security_groups: [{ name: 'default' }],
    adminPass: randomPassword(),
  };
  return { status: 202, body: { server }, headers: { location: `${req.baseUrl}/v2.1/servers/${id}` } };
}

function limitOf(req: ApiRequest): number {
  const raw = queryValue(req, 'limit');
  if (raw === undefined) return MAX_LIMIT;
  if (!/^\d+$/.test(raw)) throw badRequest('limit param must be an integer');
  return Math.min(Number(raw), MAX_LIMIT);
}

/** A date-time as Nova's handler parses an admin's changes-before below 2.66 (no schema for it there). */
function legacyTime(v: string): Date {
  try {
    return dateTimeParam('changes-before', v);
  } catch {
    throw badRequest('Invalid filter field: changes-before.');
  }
}

/**
 * Nova's changes-since (every version) and changes-before (its query schema from 2.66; below,
 * a member's is dropped and an admin's still applies, as Nova passes an admin's filters on):
 * each value a date-time, the last one used, changes-before not earlier than changes-since.
 */
function changesOf(req: ApiRequest): { changesSince?: Date; changesBefore?: Date } {
  const last = (k: string, parse = (v: string): Date => dateTimeParam(k, v)): Date | undefined => queryValues(req, k).map(parse).pop();
  const changesSince = last('changes-since');
  const changesBefore = atLeast(req.version, 66)
    ? last('changes-before')
    : req.caller.isAdmin
      ? last('changes-before', legacyTime)
      : undefined;
  if (changesSince !== undefined && changesBefore !== undefined && changesBefore < changesSince) {
    throw badRequest('The value of changes-since must be less than or equal to changes-before.');
  }
  return { changesSince, changesBefore };
}

function filterOf(req: ApiRequest): ListFilter {
  const allTenants = queryFlag(req, 'all_tenants');
  if (allTenants && !req.caller.isAdmin)
    throw forbidden("Policy doesn't allow os_compute_api:servers:index:get_all_tenants to be performed.");
  const tenant = queryValue(req, 'project_id') ?? queryValue(req, 'tenant_id');
  const projectId = allTenants ? tenant : req.caller.projectId;
  const status = queryValue(req, 'status');
  return {
    projectId,
    status: status === undefined ? undefined : statusFilter(status),
    name: namePattern(queryValues(req, 'name')),
    limit: limitOf(req),
    marker: queryValue(req, 'marker'),
    ...changesOf(req),
    downCellRecords: listShowsDownCells(Object.keys(req.query), req.caller.isAdmin, req.version),
  };
}

function pageLinks(req: ApiRequest, path: string, page: { servers: readonly { uuid: string }[]; more: boolean }): Record<string, unknown> {
  const last = page.servers[page.servers.length - 1];
  if (!page.more || last === undefined) return {};
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (k !== 'marker') params.set(k, Array.isArray(v) ? (v[v.length - 1] ?? '') : v);
  params.set('marker', last.uuid);
  return { servers_links: [{ rel: 'next', href: `${req.baseUrl}/v2.1/${path}?${params.toString()}` }] };
}

function list(detail: boolean) {
  return async (req: ApiRequest, deps: ApiDeps): Promise<ApiReply> => {
    const page = await listServers(deps, filterOf(req), req.caller);
    const servers = page.servers.map((r) => (detail ? serverDetail(r, req) : serverSummary(r, req)));
    return { status: 200, body: { servers, ...pageLinks(req, detail ? 'servers/detail' : 'servers', page) } };
  };
}

async function show(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const server = await readServer(deps, req.params.id ?? '', req.caller, downCellShow(deps, atLeast(req.version, 69)));
  return { status: 200, body: { server: serverDetail(server, req) } };
}

async function remove(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  await deleteServer(deps, req.params.id ?? '', req.caller, req.requestId);
  return { status: 204 };
}

/** `/v2.1/servers` routes. */
export const SERVER_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/v2.1/servers', handler: create },
  { method: 'GET', path: '/v2.1/servers', handler: list(false) },
  { method: 'GET', path: '/v2.1/servers/detail', handler: list(true) },
  { method: 'GET', path: '/v2.1/servers/:id', handler: show },
  { method: 'DELETE', path: '/v2.1/servers/:id', handler: remove },
];
