/**
 * Capacity rules shared by the search and the summaries, as Placement applies them.
 */
import type { InventoryUsage } from './types';

/**
 * Whether `amount` more fits one inventory: `used + amount <= (total - reserved) *
 * allocation_ratio` (compared unrounded, as Placement's SQL does), within min_unit /
 * max_unit, and a multiple of step_size.
 */
export function fits(inv: InventoryUsage, amount: number): boolean {
  return (
    inv.used + amount <= (inv.total - inv.reserved) * inv.allocationRatio &&
    inv.minUnit <= amount &&
    inv.maxUnit >= amount &&
    amount % inv.stepSize === 0
  );
}

/** The capacity a provider summary reports: `int((total - reserved) * allocation_ratio)`. */
export function summaryCapacity(inv: InventoryUsage): number {
  return Math.trunc((inv.total - inv.reserved) * inv.allocationRatio);
}

/**
 * The final check on a merged request (several groups may take the same class from the
 * same provider): false when used + amount exceeds the summary capacity or max_unit.
 */
export function mergedAmountFits(inv: InventoryUsage, amount: number): boolean {
  return inv.used + amount <= summaryCapacity(inv) && amount <= inv.maxUnit;
}
