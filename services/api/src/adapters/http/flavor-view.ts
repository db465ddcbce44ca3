import { getFlavorByFlavorId, listFlavorAccess, type Flavor } from '@cellsched/api-db';
import type { Caller } from '../../domain/auth';
import { notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { links } from '../../domain/server-view';
import type { ApiDeps, ApiRequest } from './kit';

/** Nova's flavor summary view (`GET /flavors`): id, name, links; description from 2.55. */
export function flavorSummary(f: Flavor, req: ApiRequest): Record<string, unknown> {
  const view: Record<string, unknown> = { id: f.flavorid, name: f.name, links: links(req, 'flavors', f.flavorid) };
  if (atLeast(req.version, 55)) view.description = f.description;
  return view;
}

/** Nova's flavor detail view (show, detail, create, update); extra specs from 2.61. */
export function flavorDetail(f: Flavor, req: ApiRequest): Record<string, unknown> {
  const view: Record<string, unknown> = {
    ...flavorSummary(f, req),
    ram: f.memoryMb,
    disk: f.rootGb,
    vcpus: f.vcpus,
    swap: f.swap === 0 ? '' : f.swap,
    'OS-FLV-EXT-DATA:ephemeral': f.ephemeralGb,
    'OS-FLV-DISABLED:disabled': f.disabled,
    rxtx_factor: f.rxtxFactor,
    'os-flavor-access:is_public': f.isPublic,
  };
  if (atLeast(req.version, 61)) view.extra_specs = { ...f.extraSpecs };
  return view;
}

/**
 * The flavor of the URL's `flavor_id`, or Nova's 404. A member sees a private flavor only if
 * the project was given access (Nova's flavor query for a non-admin context).
 */
export async function flavorOf(req: ApiRequest, deps: ApiDeps): Promise<Flavor> {
  const id = req.params.flavor_id ?? '';
  const f = await getFlavorByFlavorId(deps.apiDb, id);
  // NOTE: the access list is read only when it decides
  const access = f === undefined || f.isPublic || req.caller.isAdmin ? [] : await listFlavorAccess(deps.apiDb, id);
  if (f === undefined || !flavorVisibleTo(f, access, req.caller)) throw notFound(`Flavor ${id} could not be found.`);
  return f;
}

/** Nova's flavor query for a member: a public flavor, or a private one its project was given (`access`); the admin sees all. Pure. */
export function flavorVisibleTo(f: Flavor, access: readonly string[], caller: Pick<Caller, 'isAdmin' | 'projectId'>): boolean {
  return f.isPublic || caller.isAdmin || access.includes(caller.projectId);
}
