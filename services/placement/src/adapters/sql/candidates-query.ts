/**
 * The allocation-candidates use case over PostgreSQL, shared by the REST handler and the
 * gRPC service: load a consistent snapshot, run the pure search on it.
 */
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { findAllocationCandidates, type SearchOptions } from '../../domain/candidates/search';
import type { CandidateResult, CandidateSnapshot, RequestGroup, RequestWideParams } from '../../domain/candidates/types';
import type { CandidateSnapshotCache } from './candidates-snapshot';

/** A search result with the snapshot it was computed on (needed to render names and summaries). */
export interface CandidatesAnswer {
  readonly snapshot: CandidateSnapshot;
  readonly result: CandidateResult;
}

/**
 * Runs GET /allocation_candidates semantics on the current snapshot of `snapshots` (main
 * makes one per database, shared by the REST and gRPC services). Read-only; throws
 * CandidateQueryError for an unknown resource class or trait.
 */
export async function queryAllocationCandidates(
  snapshots: CandidateSnapshotCache,
  groups: readonly RequestGroup[],
  params: RequestWideParams,
  opts: SearchOptions = {},
): Promise<CandidatesAnswer> {
  const snapshot = await snapshots.get();
  // NOTE: the snapshot's refresh and the search each hold the event loop for milliseconds at
  // 10,000 providers (the search 10-20 ms on this machine): the claims that arrived meanwhile go
  // first, so a candidates query (a scheduler replica refreshes its copy every 2 s) does not stall
  // every claim in flight for the whole query. The snapshot is immutable, so waiting is safe.
  await yieldToIo();
  return { snapshot, result: findAllocationCandidates(snapshot, groups, params, opts) };
}
