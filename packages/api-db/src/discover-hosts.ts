import { CELL0_UUID } from '@cellsched/config';
import { listComputeNodes, listServices, markComputeNodesMapped, type Queryable as CellQueryable } from '@cellsched/cell-db';
import { getCellMapping, listCellMappings, type CellMapping } from './cell-mappings';
import { addHostMappings, listHostMappings } from './host-mappings';
import type { Queryable } from './db';

/** The binary compute services register under (Nova's). */
export const COMPUTE_BINARY = 'nova-compute';

export interface DiscoverHostsOptions {
  /** Only this cell (Nova's `--cell_uuid`); `discoverHosts` returns undefined if it does not exist. */
  cellUuid?: string;
  /** Discover from `services` (binary nova-compute) instead of unmapped `compute_nodes`. */
  byService?: boolean;
  /** Progress messages, Nova's wording (what `--verbose` prints). */
  status?: (message: string) => void;
  /** A connection to a cell's database (the caller opens and closes it). */
  cellDb(cell: CellMapping): CellQueryable;
}

async function unmappedHosts(
  apiDb: Queryable,
  cellDb: CellQueryable,
  cell: CellMapping,
  opts: DiscoverHostsOptions,
  status: (m: string) => void,
): Promise<string[]> {
  if (opts.byService === true) {
    const mapped = new Set((await listHostMappings(apiDb)).map((h) => h.host));
    const hosts = (await listServices(cellDb, { binary: COMPUTE_BINARY })).map((s) => s.host).filter((h) => !mapped.has(h));
    status(`Found ${hosts.length} unmapped computes in cell: ${cell.uuid}`);
    return hosts;
  }
  const nodes = await listComputeNodes(cellDb, { unmapped: true });
  status(`Found ${nodes.length} unmapped computes in cell: ${cell.uuid}`);
  for (const n of nodes) status(`Checking host mapping for compute host '${n.host}': ${n.uuid}`);
  return [...new Set(nodes.map((n) => n.host))];
}

async function discoverInCell(
  apiDb: Queryable,
  cell: CellMapping,
  opts: DiscoverHostsOptions,
  status: (m: string) => void,
): Promise<string[]> {
  status(cell.name === null ? `Getting computes from cell: ${cell.uuid}` : `Getting computes from cell '${cell.name}': ${cell.uuid}`);
  const cellDb = opts.cellDb(cell);
  const hosts = await unmappedHosts(apiDb, cellDb, cell, opts, status);
  // NOTE: host mappings first, then `mapped = 1` in the cell: a crash in between leaves the
  // nodes unmapped, so the next run finds them again and the mapping insert is a no-op.
  const added = await addHostMappings(apiDb, cell.id, hosts);
  for (const host of added) status(`Creating host mapping for compute host '${host}': ${cell.uuid}`);
  await markComputeNodesMapped(cellDb, hosts);
  return added;
}

/**
 * Nova's `discover_hosts` (nova/objects/host_mapping.py): in each cell (or one; cell0 is
 * skipped) maps every compute host without a host mapping to that cell, then marks its
 * compute nodes mapped. A host already mapped (to any cell) is never moved. Idempotent and
 * safe to run concurrently: a second run maps nothing. Returns the hosts newly mapped, or
 * undefined if `cellUuid` names no cell. For `cellsched-manage cell_v2 discover_hosts` and
 * any periodic discovery (Nova's `discover_hosts_in_cells_interval`).
 */
export async function discoverHosts(apiDb: Queryable, opts: DiscoverHostsOptions): Promise<string[] | undefined> {
  const status = opts.status ?? ((): void => undefined);
  let cells: CellMapping[];
  if (opts.cellUuid !== undefined) {
    const cell = await getCellMapping(apiDb, opts.cellUuid);
    if (cell === undefined) return undefined;
    cells = [cell];
  } else {
    cells = await listCellMappings(apiDb);
    status(`Found ${cells.length} cell mappings.`);
  }
  const added: string[] = [];
  for (const cell of cells) {
    if (cell.uuid === CELL0_UUID) {
      status('Skipping cell0 since it does not contain hosts.');
      continue;
    }
    added.push(...(await discoverInCell(apiDb, cell, opts, status)));
  }
  return added;
}
