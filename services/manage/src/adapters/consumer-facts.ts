import { instancesWithBuildRequest, listCellMappings } from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import {
  findMigrations,
  listComputeNodes,
  listInstances,
  listPendingProviders,
  type ComputeNodeRecord,
  type MigrationRecord,
} from '@cellsched/cell-db';
import type { Pool } from 'pg';
import type { CommandContext } from '../commands/types';
import type { ConsumerFacts, InstanceFact, MigrationFact, NodeRef } from '../domain/orphan-allocations';

/** One mapped cell (cell0 included) and a pool on its database. */
export interface CellDb {
  readonly uuid: string;
  readonly name: string;
  readonly pool: Pool;
}

/** A cell database that could not be read: the audit judges nothing without every cell. */
export class CellUnreadableError extends Error {
  constructor(cell: CellDb, cause: unknown) {
    super(
      `cell ${cell.name} (${cell.uuid}) could not be read: ${cause instanceof Error ? cause.message : String(cause)}; ` +
        'an allocation is judged only when every cell is known, so nothing was judged or changed',
    );
    this.name = 'CellUnreadableError';
  }
}

async function read<T>(cell: CellDb, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new CellUnreadableError(cell, err);
  }
}

/** Every mapped cell, cell0 included (Nova's scatter-gather targets), from the API DB's cell_mappings. */
export async function mappedCells(ctx: CommandContext): Promise<CellDb[]> {
  return (await listCellMappings(ctx.apiDb())).map((c) => ({
    uuid: c.uuid,
    name: c.name ?? c.uuid,
    pool: ctx.openDb(c.databaseConnection),
  }));
}

/** A cell's live compute nodes, then its retired ones whose providers are still queued for deletion (kept while instances hold them). */
async function nodesWithProviders(cell: CellDb): Promise<ComputeNodeRecord[]> {
  const live = await listComputeNodes(cell.pool);
  const liveUuids = new Set(live.map((n) => n.uuid));
  const pending = [...new Set([...(await listPendingProviders(cell.pool)).values()].flat())].filter((u) => !liveUuids.has(u));
  return pending.length === 0 ? live : [...live, ...(await listComputeNodes(cell.pool, { uuids: pending, includeDeleted: true }))];
}

/**
 * Compute node uuid (= its root provider's uuid) → where it is, over every cell but cell0: the
 * live nodes, and the retired ones (a host its compute process no longer serves) whose providers
 * are still queued for deletion (`compute_processes.pending_providers`): such a provider is kept,
 * COMPUTE_STATUS_DISABLED, while the ACTIVE instances still on that host hold allocations on it,
 * and those are rightly held, not `not_on_node` (deleting them would leave an ACTIVE server holding
 * nothing).
 */
export async function computeNodeIndex(cells: readonly CellDb[]): Promise<Map<string, NodeRef>> {
  const out = new Map<string, NodeRef>();
  for (const cell of cells.filter((c) => c.uuid !== CELL0_UUID)) {
    for (const n of await read(cell, () => nodesWithProviders(cell)))
      out.set(n.uuid, { cellUuid: cell.uuid, host: n.host, hypervisorHostname: n.hypervisorHostname });
  }
  return out;
}

const toMigrationFact = (m: MigrationRecord): MigrationFact => ({
  uuid: m.uuid,
  instanceUuid: m.instanceUuid,
  status: m.status,
  sourceCompute: m.sourceCompute,
  sourceNode: m.sourceNode,
  destCompute: m.destCompute,
  destNode: m.destNode,
});

/**
 * What the API DB and every cell know about each consumer uuid (instances, deleted ones
 * included; migrations by their own uuid and by instance; build requests). Read-only.
 */
export async function gatherConsumerFacts(
  apiDb: Pool,
  cells: readonly CellDb[],
  uuids: readonly string[],
): Promise<Map<string, ConsumerFacts>> {
  // NOTE: build requests first, cells second. The super-conductor creates the instance in its cell
  // before it deletes the build request, so a claim in flight is seen as one or the other, never neither.
  const building = uuids.length === 0 ? new Set<string>() : await instancesWithBuildRequest(apiDb, uuids);
  const instances = new Map<string, InstanceFact[]>();
  const migrations: MigrationFact[] = [];
  for (const cell of uuids.length === 0 ? [] : cells) {
    for (const i of await read(cell, () => listInstances(cell.pool, { uuids, includeDeleted: true }))) {
      const fact = {
        cellUuid: cell.uuid,
        cellName: cell.name,
        vmState: i.vmState,
        host: i.host,
        node: i.node,
        deleted: i.deletedAt !== null,
        launched: i.launchedAt !== null,
      };
      instances.set(i.uuid, [...(instances.get(i.uuid) ?? []), fact]);
    }
    migrations.push(...(await read(cell, () => findMigrations(cell.pool, { uuids, instanceUuids: uuids }))).map(toMigrationFact));
  }
  return new Map(
    uuids.map((u) => [
      u,
      {
        instances: instances.get(u) ?? [],
        migration: migrations.find((m) => m.uuid === u),
        instanceMigrations: migrations.filter((m) => m.instanceUuid === u),
        buildRequest: building.has(u),
      },
    ]),
  );
}
