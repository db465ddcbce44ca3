import { randomPassword } from '../../domain/admin-password';
import type { Obj } from '../../domain/action-schema';
import { requireAdmin } from '../../domain/auth';
import { badRequest } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { parseRebuild } from '../../domain/rebuild-body';
import type { ParsedServerAction } from '../../domain/server-action';
import {
  noBody,
  parseEvacuate,
  parseMigrate,
  parseMigrateLive,
  parseReboot,
  parseResize,
  parseUnshelve,
} from '../../domain/server-action-bodies';
import { rebuildView } from '../../domain/server-view';
import { acceptServerAction } from '../server-action';
import { actionDispatcher, type ActionRoute, type ApiDeps, type ApiReply, type ApiRequest, type Handler, type Route } from './kit';

/** One server action (`POST /servers/{id}/action` with `{"<name>": {...}}`): its handler and, if admin-only, its policy rule. */
/** A server action: its handler and, when admin only, Nova's policy name. */
export type ServerAction = ActionRoute;

type Parser = (body: Obj, req: ApiRequest) => ParsedServerAction;

/** An action whose answer is only a status: parse (Nova's schema), accept (checks, intent, cast), answer. */
function simple(parse: Parser, status: 202 | 204): Handler {
  return async (req, deps) => {
    await acceptServerAction(deps, req, parse(req.body as Obj, req));
    return { status };
  };
}

/** `evacuate`: 200; below 2.14 `{"adminPass": ...}` (the given one, else a new one unless on shared storage), from 2.14 no body. */
async function evacuate(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const p = parseEvacuate(req.body as Obj, req.version);
  await acceptServerAction(deps, req, p);
  if (atLeast(req.version, 14)) return { status: 200 };
  return { status: 200, body: { adminPass: p.adminPass ?? (p.onSharedStorage === true ? null : randomPassword()) } };
}

/** `rebuild`: 202 with the server (Nova's reduced view before 2.75), `adminPass`, `user_data` from 2.57, and `Location`. */
async function rebuild(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const p = parseRebuild(req.body as Obj, req.version);
  const { server } = await acceptServerAction(deps, req, p);
  const shown = { ...server, imageRef: p.imageRef ?? server.imageRef, name: p.name ?? server.name };
  const view: Record<string, unknown> = { ...rebuildView(shown, req), adminPass: p.adminPass ?? randomPassword() };
  if (atLeast(req.version, 57)) view.user_data = p.userData ?? null;
  return { status: 202, body: { server: view }, headers: { location: `${req.baseUrl}/v2.1/servers/${server.uuid}` } };
}

/**
 * The server actions served, by the body's key, with Nova's policies: migrate, live migration,
 * evacuate and shelve-offload are admin-only (Nova's defaults), the others are the server's
 * project's (a caller of another project gets the 404 of a missing server). Each handler is
 * called with the whole body, after its policy; it validates `body[name]` itself.
 */
export const SERVER_ACTIONS: ReadonlyMap<string, ServerAction> = new Map<string, ServerAction>([
  ['os-stop', { handler: simple(noBody('stop', 'stop'), 202) }],
  ['os-start', { handler: simple(noBody('start', 'start'), 202) }],
  ['reboot', { handler: simple(parseReboot, 202) }],
  ['rebuild', { handler: rebuild }],
  ['resize', { handler: simple(parseResize, 202) }],
  ['confirmResize', { handler: simple(noBody('confirmResize', 'confirmResize'), 204) }],
  ['revertResize', { handler: simple(noBody('revertResize', 'revertResize'), 202) }],
  ['migrate', { handler: simple((b, r) => parseMigrate(b, r.version), 202), policy: 'os_compute_api:os-migrate-server:migrate' }],
  [
    'os-migrateLive',
    { handler: simple((b, r) => parseMigrateLive(b, r.version), 202), policy: 'os_compute_api:os-migrate-server:migrate_live' },
  ],
  ['evacuate', { handler: evacuate, policy: 'os_compute_api:os-evacuate' }],
  ['shelve', { handler: simple(noBody('shelve', 'shelve'), 202) }],
  ['shelveOffload', { handler: simple(noBody('shelveOffload', 'shelveOffload'), 202), policy: 'os_compute_api:os-shelve:shelve_offload' }],
  ['unshelve', { handler: simple((b, r) => parseUnshelve(b, r.version), 202) }],
]);

const dispatch = actionDispatcher(SERVER_ACTIONS);

/** `POST /v2.1/servers/{id}/action`. */
export const SERVER_ACTION_ROUTES: readonly Route[] = [{ method: 'POST', path: '/v2.1/servers/:id/action', handler: dispatch }];
