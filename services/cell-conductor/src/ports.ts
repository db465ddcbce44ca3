import type { ClaimOutcome } from '@cellsched/placement-client';
import type { Selection } from '@cellsched/wire';

/** Who consumes the allocations (the instance), as placement records it. */
export interface ClaimConsumer {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
}

/**
 * Claims in placement for the in-cell retry. `claimSelection` writes the Selection's opaque
 * allocation request for the consumer **replacing** whatever it holds (one atomic write: the
 * failed host's allocation moves to the alternate, never a window holding nothing, never two
 * claims). Safe to repeat. Expected failures are outcomes; transport errors throw.
 */
export interface InstanceClaimer {
  claimSelection(consumer: ClaimConsumer, selection: Selection): Promise<ClaimOutcome | { readonly kind: 'invalid'; readonly message: string }>;
  /** Deletes the consumer's allocations. Idempotent. */
  release(consumerUuid: string): Promise<void>;
}
