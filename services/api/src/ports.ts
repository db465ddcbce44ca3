import type { CellMapping, Queryable } from '@cellsched/api-db';
import type { SuperConductorCaster } from '@cellsched/api-clients';

export type { SuperConductorCaster };

/** One cell's answer in a scatter-gather: its value, or why it gave none. */
export type CellResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: 'timeout' | 'error'; readonly error?: unknown };

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

/**
 * Placement's side of host aggregates (Nova's report client `aggregate_add_host` /
 * `aggregate_remove_host`): the aggregate's uuid in or out of a compute node resource
 * provider's aggregates, other aggregates kept. Both idempotent and safe to retry; a provider
 * placement does not know fails with a 404 `PlacementRestError`, a lost generation race retried
 * to its bound fails with `placement.concurrent_update` (409).
 */
export interface ProviderAggregates {
  addProviderAggregate(providerUuid: string, aggregateUuid: string): Promise<void>;
  removeProviderAggregate(providerUuid: string, aggregateUuid: string): Promise<void>;
}
