import {
  CellSet,
  cellNames,
  isQuietReport,
  listCellMappings,
  type CellMapping,
  type CellOpener,
  type CellSetReport,
  type Queryable as ApiQueryable,
} from '@cellsched/api-db';
import type { CastClient } from '@cellsched/bus';
import { listInstances } from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { FAILURE_CODES, type CellConductorServiceService, type ComputeServiceService } from '@cellsched/wire';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

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
 * A cell this super-conductor has not opened (yet): its mapping was created moments ago, or it
 * was deleted. Retryable: the registry re-reads `cell_mappings` at once, and the next try of
 * the handler finds a cell that was just created.
 */
export class CellNotOpenError extends Error {
  readonly code = FAILURE_CODES.superConductor.cellNotOpen;
  readonly retryable = true;
  constructor(uuid: string) {
    super(`cell ${uuid} is not open in this super-conductor (no such cell mapping, or it could not be opened yet)`);
    this.name = 'CellNotOpenError';
  }
}

/**
 * Every cell's connections, opened from the API DB's `cell_mappings` and kept in step with it
 * by `refresh()` (main.ts calls it periodically): a cell created with `cellsched-manage cell_v2
 * create_cell` is opened (pool + bus), a deleted one closed, a moved one reopened. A disabled
 * cell stays open: it gets no new builds (the scheduler skips it), but its servers are still
 * deleted and updated through it. Lookups are synchronous and safe to call concurrently.
 */
export class CellRegistry {
  private readonly set: CellSet<CellHandle>;
  private inFlight: Promise<CellSetReport> | undefined;
  /** The read that follows the one in flight (see {@link refresh}). */
  private queued: Promise<CellSetReport> | undefined;

  constructor(
    private readonly apiDb: ApiQueryable,
    opener: CellOpener<CellHandle>,
    private readonly log?: Logger,
  ) {
    this.set = new CellSet(opener);
  }

  /** A registry over handles opened elsewhere (tests): `refresh()` takes the mapped cells among them, closing nothing. */
  static fixed(apiDb: ApiQueryable, handles: readonly CellHandle[]): CellRegistry {
    const byUuid = new Map(handles.map((h) => [h.uuid, h]));
    return new CellRegistry(apiDb, {
      open: async (m) => {
        const h = byUuid.get(m.uuid);
        if (h === undefined) throw new Error(`no handle for cell ${m.uuid}`);
        return h;
      },
      close: async () => undefined,
    });
  }

  /**
   * Re-reads `cell_mappings` and opens, reopens or closes cells to match. The read starts after
   * the call: while one is under way (it may have read before the caller's change), one more
   * follows it, shared by every call made meanwhile. Logs what changed. Throws only when the API
   * DB cannot be read (the open cells stay as they are); a cell that fails to open is logged and
   * retried on the next call.
   */
  refresh(): Promise<CellSetReport> {
    if (this.inFlight === undefined) {
      this.inFlight = listCellMappings(this.apiDb)
        .then((m) => this.set.apply(m))
        .then((r) => {
          this.report(r);
          return r;
        })
        .finally(() => {
          this.inFlight = undefined;
        });
      return this.inFlight;
    }
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.refresh();
      });
    return this.queued;
  }

  /** The open cell (or cell0) with this uuid; throws {@link CellNotOpenError} (and re-reads the mappings) otherwise. */
  cell(uuid: string): CellHandle {
    const c = this.set.get(uuid)?.resource;
    if (c !== undefined) return c;
    this.refresh().catch((err: unknown) => this.log?.warn({ err }, 'cell mappings could not be read'));
    throw new CellNotOpenError(uuid);
  }

  /** Cell 0, where instances that could not be scheduled are buried. */
  get cell0(): CellHandle {
    return this.cell(CELL0_UUID);
  }

  /** The API DB `cell_mappings.id` of an open cell (the instance mapping's foreign key); re-reads the mappings once on a miss. */
  async mappingId(uuid: string): Promise<number> {
    if (this.set.get(uuid) === undefined) await this.refresh();
    const id = this.set.get(uuid)?.mapping.id;
    if (id === undefined)
      throw new Error(`cell ${uuid} has no cell mapping in the API database (run cellsched-manage cell_v2 create_cell / map_cell0)`);
    return id;
  }

  /** Instances (by uuid) already present in some open cell database (cell0 included), live or deleted: uuid → cell uuid. Read-only. */
  async locate(instanceUuids: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (instanceUuids.length === 0) return found;
    for (const { resource: c } of this.set.list()) {
      const rows = await listInstances(c.pool, { uuids: instanceUuids, includeDeleted: true });
      for (const r of rows) found.set(r.uuid, c.uuid);
    }
    return found;
  }

  /** Closes every open cell (pools and buses). */
  async close(): Promise<void> {
    await this.queued?.catch(() => undefined);
    await this.inFlight?.catch(() => undefined);
    await this.set.close();
  }

  private report(r: CellSetReport): void {
    if (this.log === undefined || isQuietReport(r)) return;
    if (r.added.length + r.moved.length + r.updated.length + r.removed.length > 0) {
      this.log.info(
        {
          opened: cellNames(r.added),
          reopened: cellNames(r.moved),
          updated: cellNames(r.updated),
          closed: cellNames(r.removed),
          disabled: cellNames(
            this.set
              .list()
              .map((c) => c.mapping)
              .filter((m) => m.disabled),
          ),
        },
        'cells changed',
      );
    }
    for (const x of r.refused) this.log.error({ cell_uuid: x.mapping.uuid, reason: x.reason }, 'cell mapping refused');
    for (const f of r.failed)
      this.log.warn({ cell_uuid: f.mapping.uuid, cell_name: f.mapping.name, err: f.error }, 'cell could not be opened or closed');
  }
}

/** What a mapping's cell is called in logs and handles. Pure. */
export function cellName(m: CellMapping): string {
  return m.name ?? m.uuid;
}
