import { withTransaction } from '@cellsched/db';
import { INVENTORY_DEFAULTS, type InventoryRecord } from '../../domain/capacity';
import { concurrentUpdate, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import * as schemas from '../../domain/schemas/inventory';
import {
  addInventory,
  checkCapacity,
  deleteAllInventories,
  deleteInventory,
  providerInventories,
  serializeInventory,
  setInventories,
  updateInventory,
  type Inventory,
} from '../sql/inventories';
import { findProvider, getProvider, lockProvider } from '../sql/resource-providers';
import { cacheHeaders, cacheHeadersIfAny, jsonBody, latest, type Handler, type PlacementRequest } from './kit';

interface InventoryBody {
  total: number;
  reserved?: number;
  min_unit?: number;
  max_unit?: number;
  step_size?: number;
  allocation_ratio?: number;
  resource_provider_generation?: number;
  resource_class?: string;
}

/** Body → record with Placement's defaults. */
export const toRecord = (b: InventoryBody): InventoryRecord => ({
  total: b.total,
  reserved: b.reserved ?? INVENTORY_DEFAULTS.reserved,
  minUnit: b.min_unit ?? INVENTORY_DEFAULTS.minUnit,
  maxUnit: b.max_unit ?? INVENTORY_DEFAULTS.maxUnit,
  stepSize: b.step_size ?? INVENTORY_DEFAULTS.stepSize,
  allocationRatio: b.allocation_ratio ?? INVENTORY_DEFAULTS.allocationRatio,
});

const generationConflict = () => concurrentUpdate('resource provider generation conflict');
const reservedCanBeTotal = (req: PlacementRequest) => atLeast(req.version, 26);

async function providerOr404(req: PlacementRequest) {
  const uuid = req.params.uuid ?? '';
  const rp = await findProvider(req.pool, uuid);
  if (!rp) throw notFound(`No resource provider with uuid ${uuid} found : No resource provider with uuid ${uuid} found`);
  return rp;
}

function inventoriesBody(invs: ReadonlyMap<string, InventoryRecord>, generation: number) {
  const out: Record<string, unknown> = {};
  for (const [rc, inv] of invs) out[rc] = serializeInventory(inv);
  return { resource_provider_generation: generation, inventories: out };
}

/** GET /resource_providers/{uuid}/inventories */
export const list: Handler = async (req) => {
  const rp = await providerOr404(req);
  const invs = await providerInventories(req.pool, rp.id);
  return {
    status: 200,
    body: inventoriesBody(invs, rp.generation),
    headers: cacheHeadersIfAny(req, latest([...invs.values()].map((i: Inventory) => i.updatedAt))),
  };
};

/** GET /resource_providers/{uuid}/inventories/{resource_class} */
export const show: Handler = async (req) => {
  const rp = await providerOr404(req);
  const rc = req.params.resource_class ?? '';
  const inv = (await providerInventories(req.pool, rp.id)).get(rc);
  if (!inv) throw notFound(`No inventory of class ${rc} for ${rp.uuid}`);
  return {
    status: 200,
    body: { ...serializeInventory(inv), resource_provider_generation: rp.generation },
    headers: cacheHeaders(req, inv.updatedAt),
  };
};

/** POST /resource_providers/{uuid}/inventories: add one class (201 + location). */
export const create: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  await getProvider(req.pool, uuid);
  const body = jsonBody<InventoryBody & { resource_class: string }>(req, schemas.POST_INVENTORY);
  const inv = toRecord(body);
  const rc = body.resource_class;
  const { gen, rpUuid } = await withTransaction(req.pool, async (c) => {
    const rp = await lockProvider(c, uuid);
    checkCapacity(
      rp.uuid,
      [{ ...inv, resourceClass: rc }],
      reservedCanBeTotal(req),
      `Unable to create inventory for resource provider ${rp.uuid}: `,
    );
    return { gen: await addInventory(c, rp, rc, inv), rpUuid: rp.uuid };
  });
  return {
    status: 201,
    body: { ...serializeInventory(inv), resource_provider_generation: gen },
    headers: { location: `${req.baseUrl}/resource_providers/${rpUuid}/inventories/${rc}`, ...cacheHeaders(req, new Date()) },
  };
};

/** PUT /resource_providers/{uuid}/inventories: replace all, generation checked. */
export const setAll: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  await getProvider(req.pool, uuid);
  const body = jsonBody<{ resource_provider_generation: number; inventories: Record<string, InventoryBody> }>(req, schemas.PUT_INVENTORY);
  const invs = new Map(Object.entries(body.inventories).map(([rc, b]) => [rc, toRecord(b)]));
  const gen = await withTransaction(req.pool, async (c) => {
    const rp = await lockProvider(c, uuid);
    if (rp.generation !== body.resource_provider_generation) throw generationConflict();
    checkCapacity(
      rp.uuid,
      [...invs].map(([rc, i]) => ({ ...i, resourceClass: rc })),
      reservedCanBeTotal(req),
      `Unable to update inventory for resource provider ${rp.uuid}: `,
    );
    return setInventories(c, rp, invs);
  });
  return { status: 200, body: inventoriesBody(invs, gen), headers: cacheHeadersIfAny(req, invs.size > 0 ? new Date() : undefined) };
};

/** PUT /resource_providers/{uuid}/inventories/{resource_class}: update one, generation checked. */
export const update: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  const rc = req.params.resource_class ?? '';
  await getProvider(req.pool, uuid);
  const body = jsonBody<InventoryBody & { resource_provider_generation: number }>(req, schemas.BASE_INVENTORY);
  const inv = toRecord(body);
  const gen = await withTransaction(req.pool, async (c) => {
    const rp = await lockProvider(c, uuid);
    if (rp.generation !== body.resource_provider_generation) throw generationConflict();
    checkCapacity(
      rp.uuid,
      [{ ...inv, resourceClass: rc }],
      reservedCanBeTotal(req),
      `Unable to update inventory for resource provider ${rp.uuid}: `,
    );
    return updateInventory(c, rp, rc, inv);
  });
  return { status: 200, body: { ...serializeInventory(inv), resource_provider_generation: gen }, headers: cacheHeaders(req, new Date()) };
};

/** DELETE /resource_providers/{uuid}/inventories/{resource_class} */
export const remove: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  await getProvider(req.pool, uuid);
  await withTransaction(req.pool, async (c) => deleteInventory(c, await lockProvider(c, uuid), req.params.resource_class ?? ''));
  return { status: 204 };
};

/** DELETE /resource_providers/{uuid}/inventories (1.5+) */
export const removeAll: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  await getProvider(req.pool, uuid);
  await withTransaction(req.pool, async (c) => deleteAllInventories(c, await lockProvider(c, uuid)));
  return { status: 204 };
};
