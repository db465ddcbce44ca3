/**
 * Capacity rules of the search and the summaries. The rule itself lives in
 * `../capacity` and is shared with the claim path, so the candidates offered and the
 * claims accepted can never disagree.
 */
import { capacityOf, checkUnits, fits as fitsCapacity } from '../capacity';
import type { InventoryUsage } from './types';

/**
 * Whether `amount` more fits one inventory: `used + amount <= (total - reserved) *
 * allocation_ratio` (compared unrounded, as Placement's SQL does), within min_unit /
 * max_unit, and a multiple of step_size.
 */
export function fits(inv: InventoryUsage, amount: number): boolean {
  return fitsCapacity(inv, inv.used, amount) && checkUnits(inv, amount) === undefined;
}

/** The capacity a provider summary reports: `int((total - reserved) * allocation_ratio)`. */
export function summaryCapacity(inv: InventoryUsage): number {
  return Math.trunc(capacityOf(inv));
}

/**
 * The final check on a merged request (several groups may take the same class from the
 * same provider): false when used + amount exceeds the summary capacity or max_unit.
 */
export function mergedAmountFits(inv: InventoryUsage, amount: number): boolean {
  return inv.used + amount <= summaryCapacity(inv) && amount <= inv.maxUnit;
}
