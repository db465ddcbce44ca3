import type { Failure, RequestSpec, Selection } from '@cellsched/wire';

/** The outcome of one SelectDestinations call; transport errors worth a redelivery throw instead. */
export type SelectOutcome =
  | { readonly kind: 'selected'; readonly destinations: readonly (readonly Selection[])[] }
  /** NoValidHost (the scheduler released every claim of the request). */
  | { readonly kind: 'no_valid_host'; readonly failure: Failure }
  /** Any other non-retryable failure: the instances are buried in cell0 with it. */
  | { readonly kind: 'failed'; readonly failure: Failure };

/**
 * The scheduler, as the super-conductor sees it. `selectDestinations` claims in placement
 * (replace semantics per consumer, so a repeat for the same instances does not double a
 * claim) and returns one list per instance: the chosen host first, then `numAlternates`
 * alternates in the same cell. Throws when the call may succeed if retried later.
 */
export interface DestinationSelector {
  selectDestinations(spec: RequestSpec, instanceUuids: readonly string[], numAlternates: number): Promise<SelectOutcome>;
}

/** Releases consumers' allocations in placement. Idempotent. */
export interface ClaimReleaser {
  release(consumerUuids: readonly string[]): Promise<void>;
}
