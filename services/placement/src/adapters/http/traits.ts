import { withTransaction } from '@cellsched/db';
import { badRequest, concurrentUpdate, notFound } from '../../domain/errors';
import { validateSchema } from '../../domain/json-schema';
import * as schemas from '../../domain/schemas/trait-class';
import { findProvider, getProvider, lockProvider } from '../sql/resource-providers';
import {
  deleteTrait,
  ensureTrait,
  findTrait,
  listTraits,
  providerTraits,
  setProviderTraits,
  type Trait,
  type TraitListFilter,
} from '../sql/traits';
import { cacheHeaders, jsonBody, latest, validateQuery, type Handler, type PlacementRequest } from './kit';

const traitsBody = (traits: readonly Trait[]) => traits.map((t) => t.name);
const modified = (traits: readonly Trait[]) => latest(traits.map((t) => t.updatedAt ?? t.createdAt));

/** PUT /traits/{name}: create a CUSTOM_ trait (201) or confirm it (204). */
export const put: Handler = async (req) => {
  const name = req.params.name ?? '';
  if (validateSchema(name, schemas.CUSTOM_TRAIT) !== undefined) {
    throw badRequest(
      'The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"',
    );
  }
  const { trait, created } = await ensureTrait(req.pool, name);
  return { status: created ? 201 : 204, headers: { location: `${req.baseUrl}/traits/${name}`, ...cacheHeaders(req, trait.createdAt) } };
};

/** GET /traits/{name}: 204 if it exists. */
export const show: Handler = async (req) => {
  const name = req.params.name ?? '';
  const t = await findTrait(req.pool, name);
  if (!t) throw notFound(`No such trait(s): ${name}.`);
  return { status: 204, headers: cacheHeaders(req, t.createdAt) };
};

/** DELETE /traits/{name} */
export const remove: Handler = async (req) => {
  await deleteTrait(req.pool, req.params.name ?? '');
  return { status: 204 };
};

function listFilter(req: PlacementRequest): TraitListFilter {
  const q = validateQuery(req, schemas.LIST_TRAITS);
  let f: TraitListFilter = {};
  if (q.name !== undefined) {
    const sep = q.name.indexOf(':');
    if (sep < 0)
      throw badRequest(
        `Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "${q.name}"`,
      );
    const op = q.name.slice(0, sep);
    const value = q.name.slice(sep + 1);
    if (op === 'in') f = { nameIn: value.split(',') };
    else if (op === 'startswith') f = { prefix: value };
  }
  if (q.associated !== undefined) {
    const a = q.associated.toLowerCase();
    if (a !== 'true' && a !== 'false') throw badRequest('The query parameter "associated" only accepts "true" or "false"');
    f = { ...f, associated: a === 'true' };
  }
  return f;
}

/** GET /traits?name=in:..|startswith:..&associated= */
export const list: Handler = async (req) => {
  const traits = await listTraits(req.pool, listFilter(req));
  return { status: 200, body: { traits: traitsBody(traits) }, headers: cacheHeaders(req, modified(traits)) };
};

/** GET /resource_providers/{uuid}/traits */
export const listForProvider: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  const rp = await findProvider(req.pool, uuid);
  if (!rp) throw notFound(`No resource provider with uuid ${uuid} found: No resource provider with uuid ${uuid} found`);
  const traits = await providerTraits(req.pool, rp.id);
  return {
    status: 200,
    body: { traits: traitsBody(traits), resource_provider_generation: rp.generation },
    headers: cacheHeaders(req, modified(traits)),
  };
};

/** PUT /resource_providers/{uuid}/traits: replace, generation checked. */
export const setForProvider: Handler = async (req) => {
  const data = jsonBody<{ traits: string[]; resource_provider_generation: number }>(req, schemas.SET_TRAITS_FOR_RP);
  const uuid = req.params.uuid ?? '';
  const result = await withTransaction(req.pool, async (c) => {
    const rp = await lockProvider(c, uuid);
    if (rp.generation !== data.resource_provider_generation) {
      throw concurrentUpdate("Resource provider's generation already changed. Please update the generation and try again.");
    }
    return setProviderTraits(c, rp, data.traits, rp.generation);
  });
  return {
    status: 200,
    body: { traits: traitsBody(result.traits), resource_provider_generation: result.generation },
    headers: cacheHeaders(req, modified(result.traits)),
  };
};

/** DELETE /resource_providers/{uuid}/traits: remove all (bumps generation). */
export const clearForProvider: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  await getProvider(req.pool, uuid);
  await withTransaction(req.pool, async (c) => {
    const rp = await lockProvider(c, uuid);
    await setProviderTraits(c, rp, [], rp.generation);
  });
  return { status: 204 };
};
