import { AZ_METADATA_KEY, listAggregates, listCellMappings, type CellMapping } from '@cellsched/api-db';
import { listComputeNodes, listServices, type ComputeNodeRecord, type ServiceRecord } from '@cellsched/cell-db';
import { isServiceUp } from '../domain/host-status';
import type { ApiDeps } from './http/kit';

/** The services and compute nodes of one cell. */
export interface CellHosts {
  readonly cell: CellMapping;
  readonly services: readonly ServiceRecord[];
  readonly nodes: readonly ComputeNodeRecord[];
}

/** Every cell's hosts (cell0 has none), read-only, plus the cells that did not answer in time. */
export async function gatherHosts(deps: ApiDeps): Promise<{ cells: CellHosts[]; down: string[] }> {
  const mappings = (await listCellMappings(deps.apiDb)).filter((c) => c.uuid !== '00000000-0000-0000-0000-000000000000');
  const results = await deps.cells.scatter(mappings, async (db) => ({
    services: await listServices(db),
    nodes: await listComputeNodes(db),
  }));
  const cells: CellHosts[] = [];
  const down: string[] = [];
  for (const cell of mappings) {
    const r = results.get(cell.uuid);
    if (r?.ok === true) cells.push({ cell, ...r.value });
    else down.push(cell.uuid);
  }
  if (down.length > 0) deps.log.warn({ cell_uuids: down }, 'cells are not responding: their services and compute nodes are not available');
  return { cells, down };
}

/** Nova's servicegroup DB driver: up if it reported within service_down_time and is not forced down. */
export function isUp(s: ServiceRecord, now = Date.now()): boolean {
  return isServiceUp(s, now);
}

/** host → availability zone from the aggregates' `availability_zone` metadata (else the default AZ). */
export async function zoneResolver(deps: ApiDeps): Promise<(host: string) => string> {
  const byHost = new Map<string, string>();
  for (const a of await listAggregates(deps.apiDb)) {
    const az = a.metadata[AZ_METADATA_KEY];
    if (az !== undefined) for (const h of a.hosts) if (!byHost.has(h)) byHost.set(h, az);
  }
  return (host) => byHost.get(host) ?? deps.defaultAvailabilityZone;
}
