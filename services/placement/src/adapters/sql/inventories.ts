import type { InventoryRecord } from '../../domain/capacity';
import { capacityOf } from '../../domain/capacity';
import { badRequest, conflict, ErrorCode, escapedNotFound, notFound } from '../../domain/errors';
import { rows, type Db } from './db';
import { resourceClassIds } from './resource-classes';
import { bumpGeneration, type ResourceProvider } from './resource-providers';

/** An inventory of one class on one provider. */
export interface Inventory extends InventoryRecord {
  readonly resourceClass: string;
  readonly updatedAt: Date;
}

interface InvRow {
  rc: string;
  rc_id: number;
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
  created_at: Date;
  updated_at: Date | null;
}
const toInv = (r: InvRow): Inventory => ({
  resourceClass: r.rc,
  total: r.total,
  reserved: r.reserved,
  minUnit: r.min_unit,
  maxUnit: r.max_unit,
  stepSize: r.step_size,
  allocationRatio: r.allocation_ratio,
  updatedAt: r.updated_at ?? r.created_at,
});

/** Inventories of a provider keyed by class name (insertion order = class id). */
export async function providerInventories(db: Db, rpId: number): Promise<Map<string, Inventory>> {
  const r = await rows<InvRow>(
    db,
    `SELECT rc.name AS rc, rc.id AS rc_id, i.* FROM inventories i
    JOIN resource_classes rc ON rc.id = i.resource_class_id WHERE i.resource_provider_id = $1 ORDER BY rc.id`,
    [rpId],
  );
  return new Map(r.map((x) => [x.rc, toInv(x)]));
}

/** Inventory JSON as Placement writes it. */
export const serializeInventory = (i: InventoryRecord): Record<string, number> => ({
  total: i.total,
  reserved: i.reserved,
  min_unit: i.minUnit,
  max_unit: i.maxUnit,
  step_size: i.stepSize,
  allocation_ratio: i.allocationRatio,
});

/**
 * Reject inventories whose capacity is not positive (before 1.26) or negative (1.26+:
 * reserved may equal total). Message as Placement's InvalidInventoryCapacity.
 */
export function checkCapacity(
  rpUuid: string,
  invs: ReadonlyArray<InventoryRecord & { resourceClass: string }>,
  reservedCanBeTotal: boolean,
  prefix: string,
): void {
  for (const inv of invs) {
    const cap = Math.trunc(capacityOf(inv));
    if (reservedCanBeTotal ? cap < 0 : cap <= 0) {
      throw badRequest(
        `${prefix}Invalid inventory for '${inv.resourceClass}' on resource provider '${rpUuid}'. The reserved value is greater than ${reservedCanBeTotal ? 'total' : 'or equal to total'}.`,
      );
    }
  }
}

async function classIdsOrThrow(db: Db, names: readonly string[], onMissing: (name: string) => Error): Promise<Map<string, number>> {
  const ids = await resourceClassIds(db, names);
  const missing = names.find((n) => !ids.has(n));
  if (missing !== undefined) throw onMissing(missing);
  return ids;
}

async function classesInUse(db: Db, rpId: number, classIds: number[]): Promise<string[]> {
  const r = await rows<{ name: string }>(
    db,
    `SELECT DISTINCT rc.name, rc.id FROM allocations a JOIN resource_classes rc ON rc.id = a.resource_class_id
    WHERE a.resource_provider_id = $1 AND a.resource_class_id = ANY($2::int[]) ORDER BY rc.id`,
    [rpId, classIds],
  );
  return r.map((x) => x.name);
}

async function upsert(db: Db, rpId: number, rcId: number, i: InventoryRecord): Promise<void> {
  await db.query(
    `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (resource_provider_id, resource_class_id) DO UPDATE SET total = EXCLUDED.total, reserved = EXCLUDED.reserved,
      min_unit = EXCLUDED.min_unit, max_unit = EXCLUDED.max_unit, step_size = EXCLUDED.step_size,
      allocation_ratio = EXCLUDED.allocation_ratio, updated_at = now()`,
    [rpId, rcId, i.total, i.reserved, i.minUnit, i.maxUnit, i.stepSize, i.allocationRatio],
  );
}

/**
 * Replace all inventories of a (locked) provider whose generation the caller checked:
 * classes not listed are deleted (409 `placement.inventory.inuse` if allocated), the
 * generation is bumped. Returns the new generation.
 */
export async function setInventories(db: Db, rp: ResourceProvider, invs: ReadonlyMap<string, InventoryRecord>): Promise<number> {
  const ids = await classIdsOrThrow(db, [...invs.keys()], (n) =>
    badRequest(`Unknown resource class in inventory for resource provider ${rp.uuid}: No such resource class ${n}.`),
  );
  const current = await providerInventories(db, rp.id);
  const toDelete = [...current.keys()].filter((rc) => !invs.has(rc));
  if (toDelete.length > 0) {
    const delIds = [...(await resourceClassIds(db, toDelete)).values()];
    const inUse = await classesInUse(db, rp.id, delIds);
    if (inUse.length > 0)
      throw conflict(
        `update conflict: Inventory for '${inUse.join(', ')}' on resource provider '${rp.uuid}' in use.`,
        ErrorCode.INVENTORY_INUSE,
      );
    await db.query('DELETE FROM inventories WHERE resource_provider_id = $1 AND resource_class_id = ANY($2::int[])', [rp.id, delIds]);
  }
  for (const [rc, inv] of invs) await upsert(db, rp.id, ids.get(rc) as number, inv);
  return bumpGeneration(db, rp, rp.generation);
}

/** Add one inventory (POST): 409 concurrent_update if the class is already there. */
export async function addInventory(db: Db, rp: ResourceProvider, rc: string, inv: InventoryRecord): Promise<number> {
  const ids = await classIdsOrThrow(db, [rc], (n) =>
    badRequest(`Unable to create inventory for resource provider ${rp.uuid}: No such resource class ${n}.`),
  );
  const rcId = ids.get(rc) as number;
  const exists = await rows(db, 'SELECT 1 FROM inventories WHERE resource_provider_id = $1 AND resource_class_id = $2', [rp.id, rcId]);
  if (exists.length > 0) {
    throw conflict(
      `Update conflict: Conflicting inventory for resource class ${rc} already exists on resource provider ${rp.uuid}.`,
      ErrorCode.CONCURRENT_UPDATE,
    );
  }
  await upsert(db, rp.id, rcId, inv);
  return bumpGeneration(db, rp, rp.generation);
}

/** Update one existing inventory (PUT one class). */
export async function updateInventory(db: Db, rp: ResourceProvider, rc: string, inv: InventoryRecord): Promise<number> {
  const ids = await classIdsOrThrow(db, [rc], (n) => escapedNotFound(`No such resource class ${n}.`));
  const rcId = ids.get(rc) as number;
  const exists = await rows(db, 'SELECT 1 FROM inventories WHERE resource_provider_id = $1 AND resource_class_id = $2', [rp.id, rcId]);
  if (exists.length === 0) {
    throw badRequest(`No inventory record with resource class for resource provider ${rp.uuid}: No inventory of class ${rc} found.`);
  }
  await upsert(db, rp.id, rcId, inv);
  return bumpGeneration(db, rp, rp.generation);
}

/** Delete one inventory: 404 if absent, 409 `placement.concurrent_update` if allocated (as Placement). */
export async function deleteInventory(db: Db, rp: ResourceProvider, rc: string): Promise<number> {
  const ids = await resourceClassIds(db, [rc]);
  const rcId = ids.get(rc);
  const del =
    rcId === undefined
      ? { rowCount: 0 }
      : await (async () => {
          const inUse = await classesInUse(db, rp.id, [rcId]);
          if (inUse.length > 0) {
            // NOTE: Placement's delete_inventory maps InventoryInUse to concurrent_update (not inventory.inuse).
            throw conflict(
              `Unable to delete inventory of class ${rc}: Inventory for '${rc}' on resource provider '${rp.uuid}' in use.`,
              ErrorCode.CONCURRENT_UPDATE,
            );
          }
          return db.query('DELETE FROM inventories WHERE resource_provider_id = $1 AND resource_class_id = $2', [rp.id, rcId]);
        })();
  const why = rcId === undefined ? `No such resource class ${rc}.` : `No inventory of class ${rc} found for delete`;
  if (!del.rowCount) throw notFound(`No inventory of class ${rc} found for delete: ${why}`);
  return bumpGeneration(db, rp, rp.generation);
}

/** Delete all inventories (1.5+): 409 `placement.inventory.inuse` if any is allocated. */
export async function deleteAllInventories(db: Db, rp: ResourceProvider): Promise<number> {
  const current = await providerInventories(db, rp.id);
  if (current.size > 0) {
    const ids = [...(await resourceClassIds(db, [...current.keys()])).values()];
    const inUse = await classesInUse(db, rp.id, ids);
    if (inUse.length > 0)
      throw conflict(`Inventory for '${inUse.join(', ')}' on resource provider '${rp.uuid}' in use.`, ErrorCode.INVENTORY_INUSE);
    await db.query('DELETE FROM inventories WHERE resource_provider_id = $1', [rp.id]);
  }
  return bumpGeneration(db, rp, rp.generation);
}
