/** One inventory record as Placement's `PUT /resource_providers/{uuid}/inventories` takes it. */
export interface InventoryRecord {
  readonly total: number;
  readonly reserved: number;
  readonly min_unit: number;
  readonly max_unit: number;
  readonly step_size: number;
  readonly allocation_ratio: number;
}

/** A compute node's resources and the operator's reservations and ratios (Nova's [DEFAULT] options). */
export interface ComputeResources {
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly localGb: number;
  /** Nova's `reserved_host_cpus` (default 0). */
  readonly reservedHostCpus?: number;
  /** Nova's `reserved_host_memory_mb` (default 512). */
  readonly reservedHostMemoryMb?: number;
  /** Nova's `reserved_host_disk_mb` (default 0), reported in GB rounded up as Nova does. */
  readonly reservedHostDiskMb?: number;
  /** Nova's `initial_*_allocation_ratio` defaults: cpu 4.0, ram 1.0, disk 1.0. */
  readonly cpuAllocationRatio?: number;
  readonly ramAllocationRatio?: number;
  readonly diskAllocationRatio?: number;
}

function record(total: number, reserved: number, ratio: number): InventoryRecord {
  return { total, reserved, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: ratio };
}

/**
 * The VCPU / MEMORY_MB / DISK_GB inventory a compute node reports, as Nova's libvirt and
 * fake drivers do (`max_unit` = total, `min_unit` = `step_size` = 1). A class whose total is
 * 0 is left out (Placement refuses a total of 0). Pure; throws RangeError for bad numbers.
 */
export function computeNodeInventory(r: ComputeResources): Record<string, InventoryRecord> {
  const ints: [string, number | undefined][] = [
    ['vcpus', r.vcpus],
    ['memoryMb', r.memoryMb],
    ['localGb', r.localGb],
    ['reservedHostCpus', r.reservedHostCpus],
    ['reservedHostMemoryMb', r.reservedHostMemoryMb],
    ['reservedHostDiskMb', r.reservedHostDiskMb],
  ];
  for (const [name, v] of ints)
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) throw new RangeError(`${name} must be a non-negative integer`);
  for (const [name, v] of [
    ['cpuAllocationRatio', r.cpuAllocationRatio],
    ['ramAllocationRatio', r.ramAllocationRatio],
    ['diskAllocationRatio', r.diskAllocationRatio],
  ] as const) {
    if (v !== undefined && !(v > 0)) throw new RangeError(`${name} must be > 0`);
  }
  const inv: Record<string, InventoryRecord> = {};
  if (r.vcpus > 0) inv.VCPU = record(r.vcpus, Math.min(r.reservedHostCpus ?? 0, r.vcpus), r.cpuAllocationRatio ?? 4.0);
  if (r.memoryMb > 0) inv.MEMORY_MB = record(r.memoryMb, Math.min(r.reservedHostMemoryMb ?? 512, r.memoryMb), r.ramAllocationRatio ?? 1.0);
  if (r.localGb > 0)
    inv.DISK_GB = record(r.localGb, Math.min(Math.ceil((r.reservedHostDiskMb ?? 0) / 1024), r.localGb), r.diskAllocationRatio ?? 1.0);
  return inv;
}

/** Nova's trait for a disabled compute service (os-traits `COMPUTE_STATUS_DISABLED`). */
export const COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED';

/** The provider's traits with COMPUTE_STATUS_DISABLED set or cleared, sorted, without duplicates. Pure. */
export function withDisabledTrait(traits: readonly string[], disabled: boolean): string[] {
  const set = new Set(traits);
  if (disabled) set.add(COMPUTE_STATUS_DISABLED);
  else set.delete(COMPUTE_STATUS_DISABLED);
  return [...set].sort();
}
