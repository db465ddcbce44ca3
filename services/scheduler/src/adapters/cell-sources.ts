/**
 * Where the scheduler reads compute nodes and services: the real cells of the API DB's
 * `cell_mapping_endpoints` (cell_mappings without credentials), each opened read-only as the
 * scheduler's own role, kept in step with the mappings at every host-cache refresh.
 */
import {
  CellSet,
  cellNames,
  isQuietReport,
  listCellMappingEndpoints,
  type CellMapping,
  type CellSetReport,
  type Queryable as ApiDb,
} from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import { createPool, readOnlyUrl } from '@cellsched/db';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { CellSource, CellSources } from './host-cache';

/** Options of {@link CellDirectory}. */
export interface CellDirectoryOptions {
  readonly apiDb: ApiDb;
  /** The scheduler's read-only role on the cell DBs, put into each mapping's URL (which holds none). */
  readonly credentials: { readonly user: string; readonly password: string };
  readonly poolSize: number;
  readonly logger: Logger;
}

/**
 * The cells the host cache reads. `refresh()` re-reads the mappings and opens a pool per new
 * cell, reopens a moved one and ends the pool of a deleted one; a disabled cell stays open
 * (its hosts stay known, so the domain can say why they are skipped) and is marked. cell0 is
 * never read: nothing is scheduled there.
 */
export class CellDirectory implements CellSources {
  private readonly set: CellSet<Pool>;
  private loaded = false;

  constructor(private readonly o: CellDirectoryOptions) {
    this.set = new CellSet<Pool>({
      open: async (m: CellMapping) =>
        createPool({
          url: readOnlyUrl(m.databaseConnection, o.credentials),
          max: o.poolSize,
          applicationName: `scheduler-cell-${(m.name ?? m.uuid).slice(0, 40)}`,
          onIdleError: (err) => o.logger.warn({ err, cell_uuid: m.uuid }, 'idle cell db client error'),
        }),
      close: (pool) => pool.end(),
    });
  }

  /** The cells as last read (cell0 excluded). */
  current(): CellSource[] {
    return this.set
      .list()
      .map((c) => ({ uuid: c.mapping.uuid, db: c.resource, disabled: c.mapping.disabled, name: c.mapping.name ?? c.mapping.uuid }));
  }

  /**
   * Re-reads the mappings and returns the cells to read now. Throws only until the first read
   * succeeded (a scheduler must not start blind); afterwards a failed read is logged and the
   * last known cells are returned.
   */
  async refresh(): Promise<readonly CellSource[]> {
    try {
      const mappings = (await listCellMappingEndpoints(this.o.apiDb)).filter((m) => m.uuid !== CELL0_UUID);
      this.report(await this.set.apply(mappings));
      this.loaded = true;
    } catch (err) {
      if (!this.loaded) throw err;
      this.o.logger.warn({ err }, 'cell mappings could not be read: reading the cells known before');
    }
    return this.current();
  }

  /** Ends every cell pool. */
  close(): Promise<void> {
    return this.set.close();
  }

  private report(r: CellSetReport): void {
    if (isQuietReport(r)) return;
    const log = this.o.logger;
    if (r.added.length + r.moved.length + r.updated.length + r.removed.length > 0) {
      log.info(
        {
          opened: cellNames(r.added),
          reopened: cellNames(r.moved),
          updated: cellNames(r.updated),
          closed: cellNames(r.removed),
          disabled: this.current()
            .filter((c) => c.disabled)
            .map((c) => c.name),
        },
        'cells changed',
      );
    }
    for (const x of r.refused) log.error({ cell_uuid: x.mapping.uuid, reason: x.reason }, 'cell mapping refused');
    for (const f of r.failed) log.warn({ cell_uuid: f.mapping.uuid, err: f.error }, 'cell could not be opened or closed');
  }
}
