import type { Logger } from '@cellsched/telemetry';
import type { Pool } from 'pg';
import { requireAdmin, type Caller } from '../../domain/auth';
import { badRequest } from '../../domain/errors';
import type { Microversion } from '../../domain/microversion';
import type { ViewContext } from '../../domain/server-view';
import type { CellDatabases, ProviderAggregates, SuperConductorCaster } from '../../ports';
import type { CastRetrier } from '../cast-retrier';
import type { CatalogueCache } from '../catalogue-cache';
import type { CreateWriter } from '../create-writer';

/** What every handler may use: the API DB, the cells (read-only), the API bus. */
export interface ApiDeps {
  readonly apiDb: Pool;
  readonly cells: CellDatabases;
  readonly conductor: SuperConductorCaster;
  /** Casts that failed after their commit are retried here (and by the sweeper). */
  readonly retrier: CastRetrier;
  /** Placement, where host aggregate membership is mirrored on the compute nodes' providers. */
  readonly placement: ProviderAggregates;
  /** Nova's `default_availability_zone` (hosts in no AZ aggregate). */
  readonly defaultAvailabilityZone: string;
  /** How long a request waits for a cast's confirm before answering anyway. */
  readonly castTimeoutMs: number;
  /** Longest PostgreSQL may spend matching a `name` pattern in the API DB (the cells have their own timeout). */
  readonly nameFilterTimeoutMs: number;
  /** How long `PUT` and `DELETE /os-services/{id}` wait for the super-conductor to apply the change (default 10 s). */
  readonly serviceWriteWaitMs?: number;
  /** Writes creates' records, those of concurrent creates in one statement. */
  readonly creates: CreateWriter;
  /** Flavors and images kept between creates (none: every create reads them). */
  readonly catalogue?: CatalogueCache;
  readonly log: Logger;
}

/**
 * Runs a write of flavors or their extra specs, then forgets the flavors and images kept: this
 * process's next create sees the change even before the database's notification arrives.
 */
export async function changingCatalogue<T>(deps: ApiDeps, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    deps.catalogue?.invalidate();
  }
}

/** An authenticated, versioned request. */
export interface ApiRequest extends ViewContext {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[]>>;
  readonly body: unknown;
  readonly requestId: string;
  readonly caller: Caller;
  readonly version: Microversion;
}

/** A handler's answer; no body means an empty response. */
export interface ApiReply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export type Handler = (req: ApiRequest, deps: ApiDeps) => Promise<ApiReply>;

/**
 * One route: method, path (`:param` style), handler, the microversions serving it (404
 * outside) and, for admin-only routes, the policy rule named in the 403 — checked before the
 * body is read, so a caller who may not use the route learns nothing about its body.
 */
export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly handler: Handler;
  readonly minVersion?: number;
  readonly maxVersion?: number;
  readonly adminPolicy?: string;
}

/** Nova's 400 for keys a schema does not allow at `path`. */
export function additionalProperties(path: string, extra: readonly string[]): Error {
  return badRequest(
    `Invalid input for field/attribute ${path}. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
  );
}

/** The JSON body as an object with no key but `allowed` (Nova's additionalProperties: false), or Nova's 400. */
export function plainBody(req: ApiRequest, allowed: readonly string[]): Record<string, unknown> {
  const b = req.body ?? {};
  if (b === null || typeof b !== 'object' || Array.isArray(b))
    throw badRequest(`Invalid input for field/attribute root. Value: ${JSON.stringify(b)}. ${JSON.stringify(b)} is not of type 'object'`);
  const extra = Object.keys(b).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw additionalProperties('root', extra);
  return b as Record<string, unknown>;
}

/** The object under the body's only key `root`, or Nova's 400 naming the missing root key (or an extra one). */
export function bodyObject(req: ApiRequest, root: string): Record<string, unknown> {
  const b = req.body;
  const inner = b !== null && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>)[root] : undefined;
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
    throw badRequest(`Invalid input for field/attribute ${root}. Value: ${JSON.stringify(b ?? null)}. '${root}' is a required property`);
  }
  plainBody(req, [root]);
  return inner as Record<string, unknown>;
}

/** Every value of a query parameter, in order. */
export function queryValues(req: ApiRequest, key: string): string[] {
  const v = req.query[key];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** The last value of a query parameter (Nova reads the last one). */
export function queryValue(req: ApiRequest, key: string): string | undefined {
  const v = req.query[key];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** Nova's truthy query values for flags such as `all_tenants` (present and not false/0/off). */
export function queryFlag(req: ApiRequest, key: string): boolean {
  const v = queryValue(req, key);
  return v !== undefined && !['0', 'false', 'f', 'off', 'no', 'n'].includes(v.toLowerCase());
}

/** One action of a `POST .../action` resource: its handler and, when admin only, Nova's policy name. */
export interface ActionRoute {
  readonly handler: Handler;
  readonly policy?: string;
}

/**
 * Nova's action dispatch (wsgi `action_peek`): the body must be a JSON object with exactly one
 * key, else "Malformed request body"; an unknown key is "There is no such action: <key>"; then
 * the action's admin policy, then its handler. Servers, flavors and aggregates share it.
 */
export function actionDispatcher(actions: ReadonlyMap<string, ActionRoute>): Handler {
  return async (req, deps) => {
    const b = req.body;
    const keys = b !== null && typeof b === 'object' && !Array.isArray(b) ? Object.keys(b) : [];
    const [name] = keys;
    if (keys.length !== 1 || name === undefined) throw badRequest('Malformed request body');
    const action = actions.get(name);
    if (action === undefined) throw badRequest(`There is no such action: ${name}`);
    if (action.policy !== undefined) requireAdmin(req.caller, action.policy);
    return action.handler(req, deps);
  };
}
