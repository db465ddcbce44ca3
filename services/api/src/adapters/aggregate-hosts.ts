import { getCellMapping, getHostMapping, listCellMappings, type CellMapping, type Queryable } from '@cellsched/api-db';
import { getService, listComputeNodes, listInstances } from '@cellsched/cell-db';
import { PlacementRestError } from '@cellsched/placement-client';
import { ApiError, conflict } from '../domain/errors';
import type { ApiDeps } from './http/kit';
import { inCell } from './server-action-checks';

// What os-aggregates needs from the cells (read-only) and placement: the compute host as Nova's
// `_get_service_in_cell_by_host` finds it, its nodes and instances, and the mirroring of
// membership on the nodes' resource providers (Nova's report client aggregate_add/remove_host).

/** A compute host found in its cell: its compute nodes (= resource provider uuids) and how many instances it holds. */
export interface ComputeHost {
  readonly host: string;
  readonly cell: CellMapping;
  readonly nodeUuids: readonly string[];
  readonly instances: number;
}

const CELL0 = '00000000-0000-0000-0000-000000000000';

async function hostIn(db: Queryable, host: string): Promise<{ nodeUuids: string[]; instances: number } | undefined> {
  const service = await getService(db, host, 'nova-compute');
  if (service === undefined || service.host !== host) return undefined;
  const nodes = await listComputeNodes(db, { host });
  return { nodeUuids: nodes.map((n) => n.uuid), instances: (await listInstances(db, { host })).length };
}

/**
 * The nova-compute host named `host`: through its host mapping, else by asking every cell
 * (Nova's fallback for an unmapped host). Undefined when no cell has it; a cell that must be
 * asked and does not answer is a 503.
 */
export async function findComputeHost(deps: ApiDeps, host: string): Promise<ComputeHost | undefined> {
  const mapping = await getHostMapping(deps.apiDb, host);
  const mapped = mapping === undefined ? undefined : await getCellMapping(deps.apiDb, mapping.cellUuid);
  if (mapped !== undefined) {
    const found = await inCell(deps, mapped, `host ${host}`, (db) => hostIn(db, host));
    return found === undefined ? undefined : { host, cell: mapped, ...found };
  }
  const cells = (await listCellMappings(deps.apiDb)).filter((c) => c.uuid !== CELL0);
  const results = await deps.cells.scatter(cells, (db) => hostIn(db, host));
  for (const cell of cells) {
    const r = results.get(cell.uuid);
    if (r?.ok === true && r.value !== undefined) return { host, cell, ...r.value };
  }
  return undefined;
}

/**
 * Instances on any of `hosts` (Nova's `get_count_by_hosts`): a mapped host is counted in its
 * cell, an unmapped one in every cell. A cell that must be asked and does not answer is a 503
 * (Nova would count its silence as instances and refuse).
 */
export async function countInstancesOnHosts(deps: ApiDeps, hosts: readonly string[]): Promise<number> {
  if (hosts.length === 0) return 0;
  const all = (await listCellMappings(deps.apiDb)).filter((c) => c.uuid !== CELL0);
  const byCell = new Map<string, Set<string>>();
  for (const host of hosts) {
    const mapping = await getHostMapping(deps.apiDb, host);
    for (const c of mapping === undefined ? all : all.filter((x) => x.uuid === mapping.cellUuid))
      byCell.set(c.uuid, (byCell.get(c.uuid) ?? new Set()).add(host));
  }
  const cells = all.filter((c) => byCell.has(c.uuid));
  const results = await deps.cells.scatter(cells, async (db, cell) => {
    let n = 0;
    for (const host of byCell.get(cell.uuid) ?? []) n += (await listInstances(db, { host })).length;
    return n;
  });
  let total = 0;
  for (const cell of cells) {
    const r = results.get(cell.uuid);
    if (r === undefined || !r.ok) throw new ApiError(503, `The cell ${cell.name ?? cell.uuid} did not answer; try again later.`);
    total += r.value;
  }
  return total;
}

/**
 * Adds the aggregate to the host's providers in placement. As in Nova, a failure is not the
 * user's: it is logged and the membership stays (`cellsched-manage placement sync_aggregates` mends it).
 */
export async function mirrorHostAdded(deps: ApiDeps, host: ComputeHost, aggregateUuid: string): Promise<void> {
  for (const rp of host.nodeUuids) {
    try {
      await deps.placement.addProviderAggregate(rp, aggregateUuid);
    } catch (err) {
      deps.log.warn(
        { err, host: host.host, provider: rp, aggregate: aggregateUuid },
        'placement aggregate not mirrored (cellsched-manage placement sync_aggregates mends it)',
      );
    }
  }
}

/**
 * Removes the aggregate from the host's providers before the API DB forgets the membership (so
 * a failure can be retried). A provider placement does not know is skipped (logged); a lost
 * generation race is Nova's 409; anything else fails the request.
 */
export async function mirrorHostRemoved(deps: ApiDeps, host: ComputeHost, aggregateUuid: string): Promise<void> {
  for (const rp of host.nodeUuids) {
    try {
      await deps.placement.removeProviderAggregate(rp, aggregateUuid);
    } catch (err) {
      if (err instanceof PlacementRestError && err.status === 404) {
        deps.log.warn(
          { err, host: host.host, provider: rp, aggregate: aggregateUuid },
          'failed to remove a compute node from a placement aggregate',
        );
        continue;
      }
      if (err instanceof PlacementRestError && err.status === 409) {
        throw conflict(`A conflict was encountered attempting to update resource provider ${rp}: ${err.message}`);
      }
      throw err;
    }
  }
}
