import { requireAdmin } from '../../domain/auth';
import { badRequest } from '../../domain/errors';
import type { ApiDeps, ApiReply, ApiRequest, Handler, Route } from './kit';

/** One server action (`POST /servers/{id}/action` with `{"<name>": {...}}`): its handler and, if admin-only, its policy rule. */
export interface ServerAction { readonly handler: Handler; readonly adminPolicy?: string }

/**
 * The server actions served, by the body's key (reboot, resize, migrate, ... are issue 13's).
 * None yet: every action is Nova's 400 "There is no such action". An action's handler is
 * called with the whole body, after its policy; it validates `body[name]` itself.
 */
export const SERVER_ACTIONS: ReadonlyMap<string, ServerAction> = new Map();

/**
 * Nova's action dispatch (wsgi `action_peek`): the body must be a JSON object with exactly one
 * key, else "Malformed request body"; an unknown key is "There is no such action: <key>".
 */
async function dispatch(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const b = req.body;
  const keys = b !== null && typeof b === 'object' && !Array.isArray(b) ? Object.keys(b) : [];
  const [name] = keys;
  if (keys.length !== 1 || name === undefined) throw badRequest('Malformed request body');
  const action = SERVER_ACTIONS.get(name);
  if (action === undefined) throw badRequest(`There is no such action: ${name}`);
  if (action.adminPolicy !== undefined) requireAdmin(req.caller, action.adminPolicy);
  return action.handler(req, deps);
}

/** `POST /v2.1/servers/{id}/action`. */
export const SERVER_ACTION_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/v2.1/servers/:id/action', handler: dispatch },
];
