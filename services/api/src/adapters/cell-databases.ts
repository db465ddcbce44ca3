import type { CellMapping, Queryable } from '@cellsched/api-db';
import { createPool, readOnlyUrl } from '@cellsched/db';
import type { Pool } from 'pg';
import type { CellDatabases, CellResult } from '../ports';

/** Options of {@link PgCellDatabases}. */
export interface CellDatabasesOptions {
  /** Longest a cell may take to answer one scatter-gather (connect included). */
  readonly timeoutMs: number;
  /** Connections per cell. */
  readonly poolSize: number;
  readonly onIdleError?: (err: Error) => void;
  /**
   * The api's own read-only role on the cell DBs (SELECT on what it shows), used instead of
   * the credentials in the cell mapping (those are the cell's owner role, for the conductors).
   */
  readonly credentials?: { readonly user: string; readonly password: string };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<CellResult<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, reason: 'timeout' }), ms);
    p.then(
      (value) => {
        clearTimeout(timer);
        resolve({ ok: true, value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve({ ok: false, reason: 'error', error });
      },
    );
  });
}

/** {@link CellDatabases} over one lazily created pg pool per cell mapping (by uuid). */
export class PgCellDatabases implements CellDatabases {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly opts: CellDatabasesOptions) {}

  db(cell: CellMapping): Queryable {
    let pool = this.pools.get(cell.uuid);
    if (pool === undefined) {
      pool = createPool({
        url: readOnlyUrl(cell.databaseConnection, this.opts.credentials),
        max: this.opts.poolSize,
        applicationName: 'api',
        connectionTimeoutMs: this.opts.timeoutMs,
        statementTimeoutMs: this.opts.timeoutMs,
        onIdleError: this.opts.onIdleError,
      });
      this.pools.set(cell.uuid, pool);
    }
    return pool;
  }

  async scatter<T>(
    cells: readonly CellMapping[],
    fn: (db: Queryable, cell: CellMapping) => Promise<T>,
  ): Promise<Map<string, CellResult<T>>> {
    const results = await Promise.all(
      cells.map(async (cell) => {
        const run = Promise.resolve().then(() => fn(this.db(cell), cell));
        return [cell.uuid, await withTimeout(run, this.opts.timeoutMs)] as const;
      }),
    );
    return new Map(results);
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  }
}
