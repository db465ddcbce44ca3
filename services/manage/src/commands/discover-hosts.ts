import { addHostMappings, getCellMapping, listCellMappings, listHostMappings, type CellMapping } from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import { listComputeNodes, listServices, markComputeNodesMapped } from '@cellsched/cell-db';
import type { CommandContext } from './types';

/** The nova-compute binary name services register under. */
export const COMPUTE_BINARY = 'nova-compute';

async function unmappedHosts(ctx: CommandContext, cell: CellMapping, byService: boolean, status: (m: string) => void): Promise<string[]> {
  const pool = ctx.openDb(cell.databaseConnection);
  if (byService) {
    const services = await listServices(pool, { binary: COMPUTE_BINARY });
    const mapped = new Set((await listHostMappings(ctx.apiDb())).map((h) => h.host));
    const hosts = services.map((s) => s.host).filter((h) => !mapped.has(h));
    status(`Found ${hosts.length} unmapped computes in cell: ${cell.uuid}`);
    return hosts;
  }
  const nodes = (await listComputeNodes(pool)).filter((n) => n.mapped === 0);
  status(`Found ${nodes.length} unmapped computes in cell: ${cell.uuid}`);
  for (const n of nodes) status(`Checking host mapping for compute host '${n.host}': ${n.uuid}`);
  return [...new Set(nodes.map((n) => n.host))];
}

async function discoverInCell(ctx: CommandContext, cell: CellMapping, byService: boolean, status: (m: string) => void): Promise<string[]> {
  status(cell.name === null ? `Getting computes from cell: ${cell.uuid}` : `Getting computes from cell '${cell.name}': ${cell.uuid}`);
  const hosts = await unmappedHosts(ctx, cell, byService, status);
  // NOTE: host mappings first, then `mapped = 1` in the cell: a crash in between leaves the
  // nodes unmapped, so the next run finds them again and the mapping insert is a no-op.
  const added = await addHostMappings(ctx.apiDb(), cell.id, hosts);
  for (const host of added) status(`Creating host mapping for compute host '${host}': ${cell.uuid}`);
  await markComputeNodesMapped(ctx.openDb(cell.databaseConnection), hosts);
  return added;
}

/**
 * Nova's `discover_hosts`: maps every compute host of each cell (or of one) that has no host
 * mapping yet, and marks its compute nodes mapped. Idempotent: a second run maps nothing.
 * Returns the hosts newly mapped, or undefined if `cellUuid` names no cell.
 */
export async function discoverHosts(ctx: CommandContext, opts: { cellUuid?: string; byService: boolean; status: (m: string) => void }): Promise<string[] | undefined> {
  let cells: CellMapping[];
  if (opts.cellUuid !== undefined) {
    const cell = await getCellMapping(ctx.apiDb(), opts.cellUuid);
    if (cell === undefined) return undefined;
    cells = [cell];
  } else {
    cells = await listCellMappings(ctx.apiDb());
    opts.status(`Found ${cells.length} cell mappings.`);
  }
  const added: string[] = [];
  for (const cell of cells) {
    if (cell.uuid === CELL0_UUID) {
      opts.status('Skipping cell0 since it does not contain hosts.');
      continue;
    }
    added.push(...await discoverInCell(ctx, cell, opts.byService, opts.status));
  }
  return added;
}
