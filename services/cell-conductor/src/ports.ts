import type { ClaimOutcome } from '@cellsched/placement-client';
import type { InstanceGroup, Selection } from '@cellsched/wire';

/** Who consumes the allocations (the instance), as placement records it. */
export interface ClaimConsumer {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  /**
   * The instance's server group (from its RequestSpec), if any: placement then keeps the group's
   * policy atomically with the claim, against every member's current allocations (members created
   * after this request included), so an alternate another member took meanwhile is refused.
   */
  readonly group?: InstanceGroup | undefined;
}

/**
 * Claims in placement for the in-cell retry. `claimSelection` writes the Selection's opaque
 * allocation request for the consumer **replacing** whatever it holds (one atomic write: the
 * failed host's allocation moves to the alternate, never a window holding nothing, never two
 * claims). Safe to repeat. Expected failures are outcomes (`group_policy`: the consumer's server
 * group forbids that host; nothing written); transport errors throw.
 */
export interface InstanceClaimer {
  claimSelection(consumer: ClaimConsumer, selection: Selection): Promise<ClaimOutcome | { readonly kind: 'invalid'; readonly message: string }>;
  /** Deletes the consumer's allocations. Idempotent. */
  release(consumerUuid: string): Promise<void>;
}

/**
 * Placement as the retirement of hosts needs it (the REST report client implements it): remove a
 * retired compute node's provider tree, or keep it out of every allocation candidate while
 * allocations of instances still there hold it. Both idempotent; transport errors throw.
 */
export interface RetiredProviders {
  /** `in_use`: placement refused (allocations remain); nothing is deleted that holds them. */
  deleteResourceProvider(uuid: string): Promise<'deleted' | 'absent' | 'in_use'>;
  /** Sets COMPUTE_STATUS_DISABLED (the scheduler's placement query forbids it). */
  setComputeStatusDisabled(uuid: string, disabled: boolean): Promise<void>;
}
