import { deleteFlavorExtraSpec, getFlavorByFlavorId, listFlavors, setFlavorExtraSpecs, type Flavor } from '@cellsched/api-db';
import { badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { METADATA_KEY } from '../../domain/nova-formats';
import { links } from '../../domain/server-view';
import { additionalProperties, bodyObject, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

function summary(f: Flavor, req: ApiRequest): Record<string, unknown> {
  const view: Record<string, unknown> = { id: f.flavorid, name: f.name, links: links(req, 'flavors', f.flavorid) };
  if (atLeast(req.version, 55)) view.description = f.description;
  return view;
}

function detail(f: Flavor, req: ApiRequest): Record<string, unknown> {
  const view: Record<string, unknown> = {
    ...summary(f, req), ram: f.memoryMb, disk: f.rootGb, vcpus: f.vcpus, swap: f.swap === 0 ? '' : f.swap, 'OS-FLV-EXT-DATA:ephemeral': f.ephemeralGb,
    'OS-FLV-DISABLED:disabled': f.disabled, rxtx_factor: f.rxtxFactor, 'os-flavor-access:is_public': f.isPublic,
  };
  if (atLeast(req.version, 61)) view.extra_specs = { ...f.extraSpecs };
  return view;
}

async function flavorOf(req: ApiRequest, deps: ApiDeps): Promise<Flavor> {
  const id = req.params.flavor_id ?? '';
  const f = await getFlavorByFlavorId(deps.apiDb, id);
  if (f === undefined) throw notFound(`Flavor ${id} could not be found.`);
  return f;
}

function list(detailed: boolean) {
  return async (req: ApiRequest, deps: ApiDeps): Promise<ApiReply> => {
    const flavors = await listFlavors(deps.apiDb, { projectId: req.caller.isAdmin ? undefined : req.caller.projectId });
    return { status: 200, body: { flavors: flavors.map((f) => (detailed ? detail(f, req) : summary(f, req))) } };
  };
}

async function extraSpecs(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  return { status: 200, body: { extra_specs: { ...(await flavorOf(req, deps)).extraSpecs } } };
}

async function extraSpec(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const f = await flavorOf(req, deps);
  const key = req.params.key ?? '';
  const value = f.extraSpecs[key];
  if (value === undefined) throw notFound(`Flavor ${f.flavorid} has no extra specs with key ${key}.`);
  return { status: 200, body: { [key]: value } };
}

async function setExtraSpecs(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const specs = bodyObject(req, 'extra_specs');
  const badKeys = Object.keys(specs).filter((k) => !METADATA_KEY.test(k));
  if (badKeys.length > 0) throw additionalProperties('extra_specs', badKeys);
  const bad = Object.entries(specs).filter(([, v]) => !(typeof v === 'string' && v.length <= 255) && !(typeof v === 'number' && Number.isFinite(v)));
  if (bad.length > 0) throw badRequest(`Invalid input for field/attribute extra_specs: values must be numbers or strings of at most 255 characters (${bad.map(([k]) => k).join(', ')})`);
  // NOTE: Nova stores a number as its text.
  const values = Object.fromEntries(Object.entries(specs).map(([k, v]) => [k, String(v)]));
  const f = await flavorOf(req, deps);
  await setFlavorExtraSpecs(deps.apiDb, f.flavorid, values);
  return { status: 200, body: { extra_specs: values } };
}

async function removeExtraSpec(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const f = await flavorOf(req, deps);
  const key = req.params.key ?? '';
  if (!(await deleteFlavorExtraSpec(deps.apiDb, f.flavorid, key))) throw notFound(`Flavor ${f.flavorid} has no extra specs with key ${key}.`);
  return { status: 200 };
}

/** `/v2.1/flavors` routes (flavor create/delete is `cellsched-manage flavor-*`). */
export const FLAVOR_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/flavors', handler: list(false) },
  { method: 'GET', path: '/v2.1/flavors/detail', handler: list(true) },
  { method: 'GET', path: '/v2.1/flavors/:flavor_id', handler: async (req, deps) => ({ status: 200, body: { flavor: detail(await flavorOf(req, deps), req) } }) },
  { method: 'GET', path: '/v2.1/flavors/:flavor_id/os-extra-specs', handler: extraSpecs },
  { method: 'POST', path: '/v2.1/flavors/:flavor_id/os-extra-specs', handler: setExtraSpecs, adminPolicy: 'os_compute_api:os-flavor-extra-specs:create' },
  { method: 'GET', path: '/v2.1/flavors/:flavor_id/os-extra-specs/:key', handler: extraSpec },
  { method: 'DELETE', path: '/v2.1/flavors/:flavor_id/os-extra-specs/:key', handler: removeExtraSpec, adminPolicy: 'os_compute_api:os-flavor-extra-specs:delete' },
];
