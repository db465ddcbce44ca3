import {
  ApiDbError, createInstanceGroup, deleteInstanceGroup, getInstanceGroup, listInstanceGroups, SERVER_GROUP_POLICIES, type InstanceGroup, type ServerGroupPolicy,
} from '@cellsched/api-db';
import { badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { bodyObject, queryFlag, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

// NOTE: soft-* policies exist from 2.15 (Nova); before that only affinity/anti-affinity.
function allowedPolicies(req: ApiRequest): readonly ServerGroupPolicy[] {
  return atLeast(req.version, 15) ? SERVER_GROUP_POLICIES : ['affinity', 'anti-affinity'];
}

function view(g: InstanceGroup, req: ApiRequest): Record<string, unknown> {
  const v: Record<string, unknown> = { id: g.uuid, name: g.name, policies: [g.policy], members: [...g.members], metadata: {} };
  if (atLeast(req.version, 13)) Object.assign(v, { project_id: g.projectId, user_id: g.userId });
  return v;
}

function parseCreate(req: ApiRequest): { name: string; policy: ServerGroupPolicy } {
  const sg = bodyObject(req, 'server_group');
  const extra = Object.keys(sg).filter((k) => k !== 'name' && k !== 'policies');
  if (extra.length > 0) throw badRequest(`Invalid input for field/attribute server_group. Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} was unexpected)`);
  const { name, policies } = sg;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 255) throw badRequest(`Invalid input for field/attribute name. Value: ${JSON.stringify(name ?? null)}. must be a string of 1-255 characters`);
  if (!Array.isArray(policies) || policies.length !== 1) throw badRequest(`Invalid input for field/attribute policies. Value: ${JSON.stringify(policies ?? null)}. must hold exactly one policy`);
  const policy = policies[0] as ServerGroupPolicy;
  if (!allowedPolicies(req).includes(policy)) {
    throw badRequest(`Invalid input for field/attribute 0. Value: ${String(policy)}. '${String(policy)}' is not one of ${JSON.stringify(allowedPolicies(req))}`);
  }
  return { name, policy };
}

async function create(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const { name, policy } = parseCreate(req);
  try {
    const { group } = await createInstanceGroup(deps.apiDb, { name, policy, userId: req.caller.userId, projectId: req.caller.projectId });
    return { status: 200, body: { server_group: view(group, req) } };
  } catch (err) {
    if (err instanceof ApiDbError) throw badRequest(err.message);
    throw err;
  }
}

async function groupOf(req: ApiRequest, deps: ApiDeps): Promise<InstanceGroup> {
  const id = req.params.id ?? '';
  const g = /^[0-9a-f-]{36}$/i.test(id) ? await getInstanceGroup(deps.apiDb, id) : undefined;
  if (g === undefined || (!req.caller.isAdmin && g.projectId !== req.caller.projectId)) throw notFound(`Instance group ${id} could not be found.`);
  return g;
}

async function list(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const all = req.caller.isAdmin && queryFlag(req, 'all_projects');
  const groups = await listInstanceGroups(deps.apiDb, all ? {} : { projectId: req.caller.projectId });
  return { status: 200, body: { server_groups: groups.map((g) => view(g, req)) } };
}

async function remove(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const g = await groupOf(req, deps);
  await deleteInstanceGroup(deps.apiDb, g.uuid);
  return { status: 204 };
}

/** `/v2.1/os-server-groups` (one policy per group, as Nova's API shapes it before 2.64). */
export const SERVER_GROUP_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/v2.1/os-server-groups', handler: create },
  { method: 'GET', path: '/v2.1/os-server-groups', handler: list },
  { method: 'GET', path: '/v2.1/os-server-groups/:id', handler: async (req, deps) => ({ status: 200, body: { server_group: view(await groupOf(req, deps), req) } }) },
  { method: 'DELETE', path: '/v2.1/os-server-groups/:id', handler: remove },
];
