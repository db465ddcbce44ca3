import { withTransaction } from '@cellsched/db';
import { randomUUID } from 'node:crypto';
import { atLeast, type Microversion } from '../../domain/microversion';
import { canonicalUuid, parseInTree, parseMemberOf, parseRequired, parseResources } from '../../domain/query-params';
import * as schemas from '../../domain/schemas/resource-provider';
import { listProviders, type ProviderFilters } from '../sql/provider-list';
import { createProvider, deleteProvider, getProvider, updateProvider, type ResourceProvider } from '../sql/resource-providers';
import { cacheHeaders, cacheHeadersIfAny, jsonBody, latest, validateQuery, type Handler } from './kit';

/** Provider JSON as Placement shows it at `v`. */
export function serializeProvider(rp: ResourceProvider, v: Microversion): Record<string, unknown> {
  const url = `/resource_providers/${rp.uuid}`;
  const rels = ['inventories', 'usages'];
  if (atLeast(v, 1)) rels.push('aggregates');
  if (atLeast(v, 6)) rels.push('traits');
  if (atLeast(v, 11)) rels.push('allocations');
  const out: Record<string, unknown> = {
    uuid: rp.uuid,
    name: rp.name,
    generation: rp.generation,
    links: [{ rel: 'self', href: url }, ...rels.map((rel) => ({ rel, href: `${url}/${rel}` }))],
  };
  if (atLeast(v, 14)) {
    out.parent_provider_uuid = rp.parentUuid;
    out.root_provider_uuid = rp.rootUuid;
  }
  return out;
}

/** POST /resource_providers: 201 empty before 1.20, 200 with the provider from 1.20. */
export const create: Handler = async (req) => {
  const data = jsonBody<{ name: string; uuid?: string; parent_provider_uuid?: string | null }>(
    req,
    atLeast(req.version, 14) ? schemas.POST_RP_1_14 : schemas.POST_RP,
  );
  const uuid = data.uuid ? canonicalUuid(data.uuid) : randomUUID();
  const parent = data.parent_provider_uuid ? canonicalUuid(data.parent_provider_uuid) : null;
  const rp = await withTransaction(req.pool, (c) => createProvider(c, uuid, data.name, parent));
  const location = { location: `${req.baseUrl}/resource_providers/${rp.uuid}` };
  if (!atLeast(req.version, 20)) return { status: 201, headers: location };
  return {
    status: 200,
    body: serializeProvider(rp, req.version),
    headers: { ...location, ...cacheHeaders(req, rp.updatedAt ?? rp.createdAt) },
  };
};

/** GET /resource_providers/{uuid} */
export const show: Handler = async (req) => {
  const rp = await getProvider(req.pool, req.params.uuid ?? '');
  return { status: 200, body: serializeProvider(rp, req.version), headers: cacheHeaders(req, rp.updatedAt ?? rp.createdAt) };
};

/** PUT /resource_providers/{uuid}: rename / re-parent (1.37 for re-parenting). */
export const update: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  const rp0 = await getProvider(req.pool, uuid);
  const data = jsonBody<{ name?: string; parent_provider_uuid?: string | null }>(
    req,
    atLeast(req.version, 14) ? schemas.PUT_RP_1_14 : schemas.PUT_RP,
  );
  const parent =
    data.parent_provider_uuid === undefined
      ? undefined
      : data.parent_provider_uuid === null
        ? null
        : canonicalUuid(data.parent_provider_uuid);
  const rp = await withTransaction(req.pool, (c) =>
    updateProvider(c, rp0, { name: data.name, parentUuid: parent }, atLeast(req.version, 37)),
  );
  // NOTE: Placement answers the updated_at its object had before the save (none if never updated).
  return { status: 200, body: serializeProvider(rp, req.version), headers: cacheHeadersIfAny(req, rp0.updatedAt ?? undefined) };
};

/** DELETE /resource_providers/{uuid}: 409 when it has children or allocations. */
export const remove: Handler = async (req) => {
  await withTransaction(req.pool, (c) => deleteProvider(c, req.params.uuid ?? ''));
  return { status: 204 };
};

/** `in_tree` as given, once checked uuid-like (400 otherwise). */
function validInTree(value: string | undefined): string | undefined {
  if (value !== undefined) parseInTree(value);
  return value;
}

function filtersFrom(req: Parameters<Handler>[0]): ProviderFilters {
  const v = req.version;
  const schema = atLeast(v, 18)
    ? schemas.GET_RPS_1_18
    : atLeast(v, 14)
      ? schemas.GET_RPS_1_14
      : atLeast(v, 4)
        ? schemas.GET_RPS_1_4
        : atLeast(v, 3)
          ? schemas.GET_RPS_1_3
          : schemas.GET_RPS_1_0;
  const q = validateQuery(req, schema);
  return {
    // NOTE: uuid and in_tree as given (validated): Placement compares the strings as they are.
    name: q.name,
    uuid: q.uuid,
    inTree: validInTree(q.in_tree),
    memberOf: req.query.has('member_of') ? parseMemberOf(req.query, v) : undefined,
    required: req.query.has('required') ? parseRequired(req.query, v) : undefined,
    resources: q.resources !== undefined ? parseResources(q.resources) : undefined,
  };
}

/** GET /resource_providers with name, uuid, member_of, in_tree, required, resources. */
export const list: Handler = async (req) => {
  const rps = await listProviders(req.pool, filtersFrom(req));
  return {
    status: 200,
    body: { resource_providers: rps.map((rp) => serializeProvider(rp, req.version)) },
    headers: cacheHeaders(req, latest(rps.map((rp) => rp.updatedAt ?? rp.createdAt))),
  };
};
