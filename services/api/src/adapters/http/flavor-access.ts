import { addFlavorAccess, listFlavorAccess, removeFlavorAccess, type Flavor } from '@cellsched/api-db';
import { requireAdmin } from '../../domain/auth';
import { isObj } from '../../domain/action-schema';
import { badRequest, conflict, notFound } from '../../domain/errors';
import { parseTenantAccess } from '../../domain/flavor-bodies';
import { atLeast } from '../../domain/microversion';
import { flavorOf } from './flavor-view';
import { actionDispatcher, changingCatalogue, type ActionRoute, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

// Nova's os-flavor-access (nova/api/openstack/compute/flavor_access.py), admin-only: the
// projects that may use a private flavor, changed by the flavor actions add/removeTenantAccess.

async function accessList(f: Flavor, deps: ApiDeps): Promise<ApiReply> {
  const projects = await listFlavorAccess(deps.apiDb, f.flavorid);
  return { status: 200, body: { flavor_access: projects.map((p) => ({ flavor_id: f.flavorid, tenant_id: p })) } };
}

async function index(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const f = await flavorOf(req, deps);
  if (f.isPublic) throw notFound('Access list not available for public flavors.');
  return accessList(f, deps);
}

/** addTenantAccess: 409 if the flavor is public (2.7+) or the project already has access. */
async function addTenant(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const tenant = parseTenantAccess(req.body, 'addTenantAccess');
  const f = await flavorOf(req, deps);
  if (f.isPublic && atLeast(req.version, 7)) throw conflict('Can not add access to a public flavor.');
  const added = await changingCatalogue(deps, () => addFlavorAccess(deps.apiDb, f.flavorid, tenant));
  if (added === 'not_found') throw notFound(`Flavor ${f.flavorid} could not be found.`);
  if (added === 'exists') throw conflict(`Flavor access already exists for flavor ${f.flavorid} and project ${tenant} combination.`);
  return accessList(f, deps);
}

/** removeTenantAccess: 404 if the project had no access. */
async function removeTenant(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const tenant = parseTenantAccess(req.body, 'removeTenantAccess');
  const f = await flavorOf(req, deps);
  if (!(await changingCatalogue(deps, () => removeFlavorAccess(deps.apiDb, f.flavorid, tenant))))
    throw notFound(`Flavor access not found for ${f.flavorid} / ${tenant} combination.`);
  return accessList(f, deps);
}

const ACTIONS: ReadonlyMap<string, ActionRoute> = new Map([
  ['addTenantAccess', { handler: addTenant, policy: 'os_compute_api:os-flavor-access:add_tenant_access' }],
  ['removeTenantAccess', { handler: removeTenant, policy: 'os_compute_api:os-flavor-access:remove_tenant_access' }],
]);

const dispatch = actionDispatcher(ACTIONS);

/** `GET /v2.1/flavors/{id}/os-flavor-access` and `POST /v2.1/flavors/{id}/action`. */
export const FLAVOR_ACCESS_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/flavors/:flavor_id/os-flavor-access', handler: index, adminPolicy: 'os_compute_api:os-flavor-access' },
  { method: 'POST', path: '/v2.1/flavors/:flavor_id/action', handler: dispatch },
];
