import {
  ApiDbError,
  createInstanceGroup,
  deleteInstanceGroup,
  getInstanceGroup,
  listInstanceGroups,
  SERVER_GROUP_POLICIES,
  type InstanceGroup,
  type ServerGroupPolicy,
} from '@cellsched/api-db';
import { badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { invalidName, isNovaName } from '../../domain/nova-formats';
import { additionalProperties, bodyObject, queryFlag, type ApiDeps, type ApiReply, type ApiRequest, type Route } from './kit';

// NOTE: soft-* policies exist from 2.15 (Nova); before that only affinity/anti-affinity.
function allowedPolicies(req: ApiRequest): readonly ServerGroupPolicy[] {
  return atLeast(req.version, 15) ? SERVER_GROUP_POLICIES : ['affinity', 'anti-affinity'];
}

function view(g: InstanceGroup, req: ApiRequest): Record<string, unknown> {
  const v: Record<string, unknown> = atLeast(req.version, 64)
    ? { id: g.uuid, name: g.name, policy: g.policy, rules: { ...g.rules }, members: [...g.members] }
    : { id: g.uuid, name: g.name, policies: [g.policy], members: [...g.members], metadata: {} };
  if (atLeast(req.version, 13)) Object.assign(v, { project_id: g.projectId, user_id: g.userId });
  return v;
}

interface NewGroup {
  name: string;
  policy: ServerGroupPolicy;
  rules: Record<string, number>;
}

function checkPolicy(req: ApiRequest, policy: unknown, path: string): ServerGroupPolicy {
  if (!allowedPolicies(req).includes(policy as ServerGroupPolicy)) {
    throw badRequest(
      `Invalid input for field/attribute ${path}. Value: ${String(policy)}. '${String(policy)}' is not one of ${JSON.stringify(allowedPolicies(req))}`,
    );
  }
  return policy as ServerGroupPolicy;
}

/** 2.64: one `policy` and optional `rules` (`max_server_per_host`, anti-affinity only). */
function rulesOf(policy: ServerGroupPolicy, rules: unknown): Record<string, number> {
  if (rules === undefined) return {};
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules))
    throw badRequest(`Invalid input for field/attribute rules. Value: ${JSON.stringify(rules)}. is not of type 'object'`);
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(rules as Record<string, unknown>)) {
    if (key !== 'max_server_per_host')
      throw badRequest(`Invalid input for field/attribute rules. Additional properties are not allowed ('${key}' was unexpected)`);
    const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)
      throw badRequest(
        `Invalid input for field/attribute max_server_per_host. Value: ${JSON.stringify(value)}. must be a positive integer`,
      );
    out[key] = n;
  }
  if (Object.keys(out).length > 0 && policy !== 'anti-affinity')
    throw badRequest("Only anti-affinity policy supports 'max_server_per_host' rule.");
  return out;
}

function parseCreate(req: ApiRequest): NewGroup {
  const sg = bodyObject(req, 'server_group');
  const allowed = atLeast(req.version, 64) ? ['name', 'policy', 'rules'] : ['name', 'policies'];
  const extra = Object.keys(sg).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw additionalProperties('server_group', extra);
  const name = sg.name;
  if (typeof name !== 'string' || name.length < 1 || name.length > 255)
    throw badRequest(
      `Invalid input for field/attribute name. Value: ${JSON.stringify(name ?? null)}. must be a string of 1-255 characters`,
    );
  if (!isNovaName(name)) throw invalidName();
  if (atLeast(req.version, 64)) {
    if (sg.policy === undefined) throw badRequest("Invalid input for field/attribute server_group. 'policy' is a required property");
    const policy = checkPolicy(req, sg.policy, 'policy');
    return { name, policy, rules: rulesOf(policy, sg.rules) };
  }
  const policies = sg.policies;
  if (!Array.isArray(policies) || policies.length !== 1)
    throw badRequest(
      `Invalid input for field/attribute policies. Value: ${JSON.stringify(policies ?? null)}. must hold exactly one policy`,
    );
  return { name, policy: checkPolicy(req, policies[0], '0'), rules: {} };
}

async function create(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const { name, policy, rules } = parseCreate(req);
  try {
    const { group } = await createInstanceGroup(deps.apiDb, {
      name,
      policy,
      rules,
      userId: req.caller.userId,
      projectId: req.caller.projectId,
    });
    return { status: 200, body: { server_group: view(group, req) } };
  } catch (err) {
    if (err instanceof ApiDbError) throw badRequest(err.message);
    throw err;
  }
}

async function groupOf(req: ApiRequest, deps: ApiDeps): Promise<InstanceGroup> {
  const id = req.params.id ?? '';
  const g = /^[0-9a-f-]{36}$/i.test(id) ? await getInstanceGroup(deps.apiDb, id) : undefined;
  if (g === undefined || (!req.caller.isAdmin && g.projectId !== req.caller.projectId))
    throw notFound(`Instance group ${id} could not be found.`);
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

/** `/v2.1/os-server-groups`: `policies: [one]` before 2.64, `policy` + `rules` from 2.64. */
export const SERVER_GROUP_ROUTES: readonly Route[] = [
  { method: 'POST', path: '/v2.1/os-server-groups', handler: create },
  { method: 'GET', path: '/v2.1/os-server-groups', handler: list },
  {
    method: 'GET',
    path: '/v2.1/os-server-groups/:id',
    handler: async (req, deps) => ({ status: 200, body: { server_group: view(await groupOf(req, deps), req) } }),
  },
  { method: 'DELETE', path: '/v2.1/os-server-groups/:id', handler: remove },
];
