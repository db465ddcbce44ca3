import { randomUUID } from 'node:crypto';
import {
  ApiDbError,
  createFlavor,
  deleteFlavor,
  getFlavorByFlavorId,
  listFlavors,
  setFlavorDescription,
  type FlavorFilters,
} from '@cellsched/api-db';
import { badRequest, conflict, notFound } from '../../domain/errors';
import { parseFlavorCreate, parseFlavorUpdate } from '../../domain/flavor-bodies';
import { nextLink, queryError } from '../../domain/paging';
import { flavorDetail, flavorOf, flavorSummary } from './flavor-view';
import { changingCatalogue, queryValue, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

// Nova's flavors and flavor-manage (nova/api/openstack/compute/flavors.py): list, show, and the
// admin's create, description update (2.55) and delete.

/** Nova's `max_limit`. */
const MAX_LIMIT = 1000;

/** oslo's `bool_from_string(strict=True)`, or undefined for anything else. */
function strictBool(v: string): boolean | undefined {
  const s = v.trim().toLowerCase();
  return ['1', 't', 'true', 'on', 'y', 'yes'].includes(s) ? true : ['0', 'f', 'false', 'off', 'n', 'no'].includes(s) ? false : undefined;
}

/** A `minRam`/`minDisk` filter as Python's `int()` reads it, or Nova's 400. */
function intFilter(req: ApiRequest, key: string): number | undefined {
  const v = queryValue(req, key);
  if (v === undefined) return undefined;
  if (!/^\s*[+-]?\d+\s*$/.test(v)) throw badRequest(`Invalid ${key} filter [${v}]`);
  return Number(v);
}

/** Nova's filters: a member sees public flavors and its project's, enabled only; the admin chooses with `is_public`. */
function filtersOf(req: ApiRequest): FlavorFilters {
  const f: FlavorFilters = { projectId: req.caller.projectId, minMemoryMb: intFilter(req, 'minRam'), minRootGb: intFilter(req, 'minDisk') };
  if (!req.caller.isAdmin) return { ...f, isPublic: true };
  const raw = queryValue(req, 'is_public');
  if (raw === undefined) return { ...f, isPublic: true, includeDisabled: true };
  if (raw.toLowerCase() === 'none') return { ...f, isPublic: null, includeDisabled: true };
  const isPublic = strictBool(raw);
  if (isPublic === undefined) throw badRequest(`Invalid is_public filter [${raw}]`);
  return { ...f, isPublic, includeDisabled: true };
}

/** Nova's `limit` (at most `max_limit`) and `marker` (a flavorid: 400 if there is no such flavor). */
async function paging(req: ApiRequest, deps: ApiDeps): Promise<{ limit: number; marker?: string }> {
  const rawLimit = queryValue(req, 'limit');
  if (rawLimit !== undefined && !/^[0-9]+$/.test(rawLimit)) throw queryError('limit', rawLimit, `'${rawLimit}' does not match '^[0-9]*$'`);
  const limit = Math.min(rawLimit === undefined ? MAX_LIMIT : Number(rawLimit), MAX_LIMIT);
  const marker = queryValue(req, 'marker');
  if (marker !== undefined && (await getFlavorByFlavorId(deps.apiDb, marker)) === undefined)
    throw badRequest(`marker [${marker}] not found`);
  return { limit, marker };
}

function list(detailed: boolean) {
  return async (req: ApiRequest, deps: ApiDeps): Promise<ApiReply> => {
    const filters = filtersOf(req);
    const { limit, marker } = await paging(req, deps);
    const items = await listFlavors(deps.apiDb, { ...filters, limit, marker });
    const body: Record<string, unknown> = { flavors: items.map((f) => (detailed ? flavorDetail(f, req) : flavorSummary(f, req))) };
    const next = nextLink(
      req.query,
      `${req.baseUrl}/v2.1/flavors${detailed ? '/detail' : ''}`,
      items[items.length - 1]?.flavorid,
      items.length,
      limit,
    );
    if (next.length > 0) body.flavors_links = next;
    return { status: 200, body };
  };
}

/** POST: 200 with the new flavor; 409 with Nova's FlavorIdExists / FlavorExists message. */
async function create(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const c = parseFlavorCreate(req.body ?? {}, req.version);
  try {
    const f = await changingCatalogue(deps, () => createFlavor(deps.apiDb, { ...c, flavorid: c.flavorid ?? randomUUID() }));
    return { status: 200, body: { flavor: flavorDetail(f, req) } };
  } catch (err) {
    if (err instanceof ApiDbError && err.code === 'api_db.flavor.exists') throw conflict(err.message);
    throw err;
  }
}

/** PUT (2.55): the description only. */
async function update(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const description = parseFlavorUpdate(req.body ?? {});
  const id = req.params.flavor_id ?? '';
  const f = await changingCatalogue(deps, () => setFlavorDescription(deps.apiDb, id, description));
  if (f === undefined) throw notFound(`Flavor ${id} could not be found.`);
  return { status: 200, body: { flavor: flavorDetail(f, req) } };
}

async function remove(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const id = req.params.flavor_id ?? '';
  if (!(await changingCatalogue(deps, () => deleteFlavor(deps.apiDb, id)))) throw notFound(`Flavor ${id} could not be found.`);
  return { status: 202 };
}

const MANAGE = 'os_compute_api:os-flavor-manage';

/** `/v2.1/flavors` and `/v2.1/flavors/{id}`. */
export const FLAVOR_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/flavors', handler: list(false) },
  { method: 'GET', path: '/v2.1/flavors/detail', handler: list(true) },
  {
    method: 'GET',
    path: '/v2.1/flavors/:flavor_id',
    handler: async (req, deps) => ({ status: 200, body: { flavor: flavorDetail(await flavorOf(req, deps), req) } }),
  },
  { method: 'POST', path: '/v2.1/flavors', handler: create, adminPolicy: `${MANAGE}:create` },
  { method: 'PUT', path: '/v2.1/flavors/:flavor_id', handler: update, minVersion: 55, adminPolicy: `${MANAGE}:update` },
  { method: 'DELETE', path: '/v2.1/flavors/:flavor_id', handler: remove, adminPolicy: `${MANAGE}:delete` },
];
