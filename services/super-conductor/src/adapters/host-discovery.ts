import { discoverHosts, listCellMappings } from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { CellRegistry } from './cells';

/**
 * One pass of Nova's periodic host discovery (`[scheduler] discover_hosts_in_cells_interval`,
 * run here because the super-conductor may write the API DB and the scheduler may not): in every
 * cell this process reaches, the compute hosts without a host mapping are mapped to it
 * (`discoverHosts`, as `cellsched-manage cell_v2 discover_hosts`), so a compute started later,
 * or started again with more hosts, becomes schedulable without a manual step. A cell that fails
 * (or is not open in this process yet: `cells.cell` throws and re-reads the mappings) is logged
 * and skipped; the others still run. Idempotent and safe alongside a manual discover_hosts (a
 * host already mapped is never moved). Returns the hosts newly mapped.
 */
export async function discoverHostsOnce(apiDb: Pool, cells: CellRegistry, log: Logger): Promise<string[]> {
  const added: string[] = [];
  for (const mapping of await listCellMappings(apiDb)) {
    if (mapping.uuid === CELL0_UUID) continue;
    try {
      const pool = cells.cell(mapping.uuid).pool;
      added.push(...((await discoverHosts(apiDb, { cellUuid: mapping.uuid, cellDb: () => pool })) ?? []));
    } catch (err) {
      log.warn({ err, target_cell: mapping.name ?? mapping.uuid }, 'host discovery failed in a cell');
    }
  }
  if (added.length > 0) log.info({ hosts: added }, 'discovered compute hosts: mapped to their cells');
  return added;
}

/** Runs {@link discoverHostsOnce} every `intervalMs` (one pass at a time); returns the stop function. 0: never. */
export function startHostDiscovery(apiDb: Pool, cells: CellRegistry, log: Logger, intervalMs: number): () => void {
  if (intervalMs <= 0) return () => undefined;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    discoverHostsOnce(apiDb, cells, log)
      .catch((err: unknown) => log.warn({ err }, 'host discovery failed'))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  return () => clearInterval(timer);
}
