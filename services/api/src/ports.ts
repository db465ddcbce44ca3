import type { CellMapping, Queryable } from '@cellsched/api-db';
import type { SuperConductorCaster } from '@cellsched/api-clients';

export type { SuperConductorCaster };

/** One cell's answer in a scatter-gather: its value, or why it gave none. */
export type CellResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: 'timeout' | 'error'; readonly error?: unknown };

/**
 * Read-only access to the cell databases (the API never writes a cell DB). `scatter` runs
 * `fn` against every given cell concurrently and gives each cell at most `timeoutMs`: a
 * down or slow cell yields `{ ok: false }` instead of failing the whole request.
 */
export interface CellDatabases {
  /** A read-only handle on one cell's database. */
  db(cell: CellMapping): Queryable;
  scatter<T>(cells: readonly CellMapping[], fn: (db: Queryable, cell: CellMapping) => Promise<T>): Promise<Map<string, CellResult<T>>>;
  close(): Promise<void>;
}
