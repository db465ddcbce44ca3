import { getInstanceMapping, type InstanceMapping, type Queryable } from '@cellsched/api-db';
import { getInstanceAction, listInstanceActions, type InstanceAction, type InstanceActionEvent } from '@cellsched/cell-db';
import { ApiError, badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { nextLink, onlyQueryKeys, parsePaging } from '../../domain/paging';
import { hostId } from '../../domain/server-view';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';
import { MAX_LIMIT } from './servers';

const iso = (d: Date | null): string | null =>
  d === null
    ? null
    : d
        .toISOString()
        .replace('Z', '')
        .replace(/(\.\d{3})$/, '$1000');

async function mappingOf(req: ApiRequest, deps: ApiDeps): Promise<InstanceMapping> {
  const id = req.params.id ?? '';
  const m = /^[0-9a-f-]{36}$/i.test(id) ? await getInstanceMapping(deps.apiDb, id) : undefined;
  if (m === undefined || (!req.caller.isAdmin && m.projectId !== req.caller.projectId))
    throw notFound(`Instance ${id} could not be found.`);
  return m;
}

/** Runs `fn` on the server's cell (read-only); undefined while the server has no cell yet. */
async function inCell<T>(deps: ApiDeps, m: InstanceMapping, fn: (db: Queryable) => Promise<T>): Promise<T | undefined> {
  if (m.cell === undefined) return undefined;
  const r = (await deps.cells.scatter([m.cell], fn)).get(m.cell.uuid);
  if (r === undefined || !r.ok) throw new ApiError(503, `The cell of instance ${m.instanceUuid} did not answer; try again later.`);
  return r.value;
}

function actionView(a: InstanceAction, req: ApiRequest): Record<string, unknown> {
  const v: Record<string, unknown> = {
    action: a.action,
    instance_uuid: a.instanceUuid,
    message: a.message,
    project_id: a.projectId,
    request_id: a.requestId,
    start_time: iso(a.startTime),
    user_id: a.userId,
  };
  if (atLeast(req.version, 58)) v.updated_at = iso(a.finishTime ?? a.startTime);
  return v;
}

function eventView(e: InstanceActionEvent, a: InstanceAction, req: ApiRequest): Record<string, unknown> {
  const v: Record<string, unknown> = { event: e.event, start_time: iso(e.startTime), finish_time: iso(e.finishTime), result: e.result };
  if (req.caller.isAdmin) v.traceback = e.traceback;
  if (atLeast(req.version, 62)) {
    if (req.caller.isAdmin) v.host = e.host ?? '';
    v.hostId = hostId(a.projectId ?? '', e.host);
  }
  return v;
}

/** From 2.58 (Nova's `list_query_params_v258`): the page after `marker` (a request id), at most `limit`, changed since `changes-since`. */
function page(
  req: ApiRequest,
  instanceUuid: string,
  actions: readonly InstanceAction[],
): { items: readonly InstanceAction[]; links?: unknown[] } {
  if (!atLeast(req.version, 58)) return { items: actions };
  const withBefore = atLeast(req.version, 66);
  onlyQueryKeys(req.query, ['limit', 'marker', 'changes-since', ...(withBefore ? ['changes-before'] : [])]);
  const p = parsePaging(req.query, MAX_LIMIT, withBefore);
  const start = p.marker === undefined ? 0 : actions.findIndex((a) => a.requestId === p.marker) + 1;
  if (start === 0 && p.marker !== undefined) throw badRequest(`Marker ${p.marker} could not be found.`);
  const updated = (a: InstanceAction): number => (a.finishTime ?? a.startTime).getTime();
  const items = actions
    .slice(start)
    .filter(
      (a) =>
        (p.changesSince === undefined || updated(a) >= p.changesSince.getTime()) &&
        (p.changesBefore === undefined || updated(a) <= p.changesBefore.getTime()),
    )
    .slice(0, p.limit);
  const links = nextLink(
    req.query,
    `${req.baseUrl}/v2.1/servers/${instanceUuid}/os-instance-actions`,
    items[items.length - 1]?.requestId,
    items.length,
    p.limit,
  );
  return links.length > 0 ? { items, links } : { items };
}

async function list(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const m = await mappingOf(req, deps);
  const actions = (await inCell(deps, m, (db) => listInstanceActions(db, m.instanceUuid))) ?? [];
  const { items, links } = page(req, m.instanceUuid, actions);
  return { status: 200, body: { instanceActions: items.map((a) => actionView(a, req)), ...(links === undefined ? {} : { links }) } };
}

async function show(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const m = await mappingOf(req, deps);
  const requestId = req.params.request_id ?? '';
  const action = await inCell(deps, m, (db) => getInstanceAction(db, m.instanceUuid, requestId));
  if (action === undefined) throw notFound(`Action for request_id ${requestId} on instance ${m.instanceUuid} not found`);
  // NOTE: from 2.51 every caller sees the events; before, only admins (Nova's policy default).
  const events = req.caller.isAdmin || atLeast(req.version, 51) ? { events: action.events.map((e) => eventView(e, action, req)) } : {};
  return { status: 200, body: { instanceAction: { ...actionView(action, req), ...events } } };
}

/** `/v2.1/servers/{id}/os-instance-actions[/{request_id}]`, read from the server's cell. */
export const INSTANCE_ACTION_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/servers/:id/os-instance-actions', handler: list },
  { method: 'GET', path: '/v2.1/servers/:id/os-instance-actions/:request_id', handler: show },
];
