import { listCellMappings, type Queryable as ApiQueryable } from '@cellsched/api-db';
import type { Bus, CastClient } from '@cellsched/bus';
import { listInstances } from '@cellsched/cell-db';
import type { CellTopology } from '@cellsched/config';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import type { Pool } from 'pg';

/** One cell as the super-conductor reaches it: its database, and (real cells only) its bus. */
export interface CellHandle {
  readonly uuid: string;
  readonly name: string;
  readonly pool: Pool;
  /** Casts to `compute.<host>` on this cell's bus; undefined for cell0 (a database only). */
  readonly compute: CastClient<typeof ComputeServiceService> | undefined;
  /** Casts to the cell conductor (topic `conductor` on this cell's bus); undefined for cell0. */
  readonly conductor: CastClient<typeof CellConductorServiceService> | undefined;
}

/**
 * Every cell's connections, opened once from the topology, and the API DB's `cell_mappings`
 * ids (looked up again when a cell is missing: `cellsched-manage cell_v2 create_cell` may
 * have run after the start). Read-only lookups; safe to call concurrently.
 */
export class CellRegistry {
  private mappingIds = new Map<string, number>();

  constructor(private readonly apiDb: ApiQueryable, readonly cell0: CellHandle, private readonly cells: ReadonlyMap<string, CellHandle>) {}

  /** Opens a pool per cell database and a compute cast client per cell bus (`buses` by cell uuid). */
  static open(topology: CellTopology, apiDb: ApiQueryable, pools: (url: string, name: string) => Pool, buses: ReadonlyMap<string, Bus>): CellRegistry {
    const cell0: CellHandle = { uuid: topology.cell0.uuid, name: topology.cell0.name, pool: pools(topology.cell0.dbUrl, topology.cell0.name), compute: undefined, conductor: undefined };
    const cells = new Map<string, CellHandle>();
    for (const c of topology.cells) {
      const bus = buses.get(c.uuid);
      cells.set(c.uuid, { uuid: c.uuid, name: c.name, pool: pools(c.dbUrl, c.name), compute: bus?.castClient(ComputeServiceService), conductor: bus?.castClient(CellConductorServiceService) });
    }
    return new CellRegistry(apiDb, cell0, cells);
  }

  /** The real cell with this uuid (or cell0); throws when the topology does not know it. */
  cell(uuid: string): CellHandle {
    const c = uuid === this.cell0.uuid ? this.cell0 : this.cells.get(uuid);
    if (c === undefined) throw new Error(`cell ${uuid} is not in this super-conductor's topology`);
    return c;
  }

  /** The API DB `cell_mappings.id` of a cell (the instance mapping's foreign key). */
  async mappingId(uuid: string): Promise<number> {
    let id = this.mappingIds.get(uuid);
    if (id === undefined) {
      this.mappingIds = new Map((await listCellMappings(this.apiDb)).map((m) => [m.uuid, m.id]));
      id = this.mappingIds.get(uuid);
    }
    if (id === undefined) throw new Error(`cell ${uuid} has no cell mapping in the API database (run cellsched-manage cell_v2 create_cell / map_cell0)`);
    return id;
  }

  /** Instances (by uuid) already present in some cell database, live or deleted: uuid → cell uuid. Read-only. */
  async locate(instanceUuids: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (instanceUuids.length === 0) return found;
    for (const c of [this.cell0, ...this.cells.values()]) {
      const rows = await listInstances(c.pool, { uuids: instanceUuids, includeDeleted: true });
      for (const r of rows) found.set(r.uuid, c.uuid);
    }
    return found;
  }

  /** Ends every cell pool (buses are the caller's). */
  async close(): Promise<void> {
    await Promise.all([this.cell0, ...this.cells.values()].map((c) => c.pool.end()));
  }
}
