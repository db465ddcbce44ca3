import { deleteFlavorExtraSpec, setFlavorExtraSpecs } from '@cellsched/api-db';
import { parseExtraSpecs, parseExtraSpecUpdate } from '../../domain/flavor-bodies';
import { notFound } from '../../domain/errors';
import { flavorOf } from './flavor-view';
import { bodyObject, changingCatalogue, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

// Nova's os-extra_specs (nova/api/openstack/compute/flavors_extraspecs.py): reads for anyone who
// may see the flavor, writes admin-only; POST merges, PUT sets the one key of its URL.

const noSuchKey = (flavorid: string, key: string): Error => notFound(`Flavor ${flavorid} has no extra specs with key ${key}.`);

async function index(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  return { status: 200, body: { extra_specs: { ...(await flavorOf(req, deps)).extraSpecs } } };
}

async function show(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const f = await flavorOf(req, deps);
  const key = req.params.key ?? '';
  if (!Object.hasOwn(f.extraSpecs, key)) throw noSuchKey(f.flavorid, key);
  return { status: 200, body: Object.fromEntries([[key, f.extraSpecs[key]]]) };
}

/** POST: `{"extra_specs": {...}}` merged into the flavor's; answers what was given (numbers as their text). */
async function create(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const specs = parseExtraSpecs('extra_specs', bodyObject(req, 'extra_specs'));
  const f = await flavorOf(req, deps);
  await changingCatalogue(deps, () => setFlavorExtraSpecs(deps.apiDb, f.flavorid, specs));
  return { status: 200, body: { extra_specs: specs } };
}

/** PUT `/{key}`: `{"<key>": value}`, exactly that key (else 400 "Request body and URI mismatch"). */
async function update(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const specs = parseExtraSpecUpdate(req.body, req.params.key ?? '');
  const f = await flavorOf(req, deps);
  await changingCatalogue(deps, () => setFlavorExtraSpecs(deps.apiDb, f.flavorid, specs));
  return { status: 200, body: specs };
}

async function remove(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const f = await flavorOf(req, deps);
  const key = req.params.key ?? '';
  if (!(await changingCatalogue(deps, () => deleteFlavorExtraSpec(deps.apiDb, f.flavorid, key)))) throw noSuchKey(f.flavorid, key);
  return { status: 200 };
}

const PATH = '/v2.1/flavors/:flavor_id/os-extra_specs';
const POLICY = 'os_compute_api:os-flavor-extra-specs';

/** `/v2.1/flavors/{id}/os-extra_specs[/{key}]`. */
export const FLAVOR_EXTRA_SPEC_ROUTES: readonly Route[] = [
  { method: 'GET', path: PATH, handler: index },
  { method: 'POST', path: PATH, handler: create, adminPolicy: `${POLICY}:create` },
  { method: 'GET', path: `${PATH}/:key`, handler: show },
  { method: 'PUT', path: `${PATH}/:key`, handler: update, adminPolicy: `${POLICY}:update` },
  { method: 'DELETE', path: `${PATH}/:key`, handler: remove, adminPolicy: `${POLICY}:delete` },
];
