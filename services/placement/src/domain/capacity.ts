/** One inventory record of a provider for one resource class. */
export interface InventoryRecord {
  readonly total: number;
  readonly reserved: number;
  readonly minUnit: number;
  readonly maxUnit: number;
  readonly stepSize: number;
  readonly allocationRatio: number;
}

/** Placement's defaults for an inventory written without the optional fields. */
export const INVENTORY_DEFAULTS = { reserved: 0, minUnit: 1, maxUnit: 2147483647, stepSize: 1, allocationRatio: 1.0 } as const;

/** Largest integer PostgreSQL's `integer` holds, Placement's MAX_INT. */
export const MAX_INT = 2147483647;
/** Largest single-precision float, Placement's SQL_SP_FLOAT_MAX. */
export const SQL_SP_FLOAT_MAX = 3.40282e38;

/**
 * Usable capacity: `(total - reserved) * allocation_ratio`, compared as a float exactly
 * as Placement's SQL capacity clause does. Reads only (the candidates snapshot): the rule that
 * decides a write is `placement_write()` (migrations/009_one_writer.sql).
 */
export function capacityOf(inv: InventoryRecord): number {
  return (inv.total - inv.reserved) * inv.allocationRatio;
}

/** Why an amount cannot be allocated against an inventory, or undefined when it can. */
export type UnitViolation = 'min_unit' | 'max_unit' | 'step_size';

/** Check one requested amount against min_unit, max_unit and step_size. */
export function checkUnits(inv: InventoryRecord, amount: number): UnitViolation | undefined {
  if (amount < inv.minUnit) return 'min_unit';
  if (amount > inv.maxUnit) return 'max_unit';
  if (amount % inv.stepSize !== 0) return 'step_size';
  return undefined;
}

/** True when `used + amount` still fits in the inventory's capacity. */
export function fits(inv: InventoryRecord, used: number, amount: number): boolean {
  return used + amount <= capacityOf(inv);
}
