import { withTransaction } from '@cellsched/db';
import { badRequest } from '../../domain/errors';
import { validateSchema } from '../../domain/json-schema';
import * as schemas from '../../domain/schemas/trait-class';
import {
  createResourceClass,
  deleteResourceClass,
  ensureResourceClass,
  getResourceClass,
  listResourceClasses,
  renameResourceClass,
  type ResourceClass,
} from '../sql/resource-classes';
import { cacheHeaders, jsonBody, latest, type Handler } from './kit';

const serialize = (rc: ResourceClass) => ({ name: rc.name, links: [{ rel: 'self', href: `/resource_classes/${rc.name}` }] });

/** GET /resource_classes */
export const list: Handler = async (req) => {
  const rcs = await listResourceClasses(req.pool);
  return {
    status: 200,
    body: { resource_classes: rcs.map(serialize) },
    headers: cacheHeaders(req, latest(rcs.map((r) => r.updatedAt ?? r.createdAt))),
  };
};

/** GET /resource_classes/{name} */
export const show: Handler = async (req) => {
  const rc = await getResourceClass(req.pool, req.params.name ?? '');
  return { status: 200, body: serialize(rc), headers: cacheHeaders(req, rc.updatedAt ?? rc.createdAt) };
};

/** POST /resource_classes: 201 + location, 409 if it exists. */
export const create: Handler = async (req) => {
  const { name } = jsonBody<{ name: string }>(req, schemas.POST_RC);
  const rc = await createResourceClass(req.pool, name);
  return { status: 201, headers: { location: `${req.baseUrl}/resource_classes/${rc.name}` } };
};

/** PUT /resource_classes/{name} before 1.7: rename a custom class. */
export const rename: Handler = async (req) => {
  const { name } = jsonBody<{ name: string }>(req, schemas.POST_RC);
  const rc = await withTransaction(req.pool, (c) => renameResourceClass(c, req.params.name ?? '', name));
  return { status: 200, body: serialize(rc) };
};

/** PUT /resource_classes/{name} from 1.7: bodiless create-or-confirm (201 / 204). */
export const ensure: Handler = async (req) => {
  const name = req.params.name ?? '';
  const err = validateSchema({ name }, schemas.POST_RC);
  if (err !== undefined) throw badRequest(`JSON does not validate: ${err}`);
  const { rc, created } = await ensureResourceClass(req.pool, name);
  return { status: created ? 201 : 204, headers: { location: `${req.baseUrl}/resource_classes/${rc.name}` } };
};

/** DELETE /resource_classes/{name}: custom and unused only. */
export const remove: Handler = async (req) => {
  await withTransaction(req.pool, (c) => deleteResourceClass(c, req.params.name ?? ''));
  return { status: 204 };
};
