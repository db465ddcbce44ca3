import { FAILURE_CODES, type Failure } from '@cellsched/wire';

/** Placement's published failure codes a claim's outcome is read from (the registry's). */
export const PLACEMENT_CONCURRENT_UPDATE = FAILURE_CODES.placement.concurrentUpdate;
export const PLACEMENT_CAPACITY_EXCEEDED = FAILURE_CODES.placement.capacityExceeded;
export const PLACEMENT_GROUP_POLICY = FAILURE_CODES.placement.claimGroupPolicy;

/**
 * The outcome of one claim, for every caller (the scheduler's claimer port, the cell conductor's
 * reschedule, the audit's heal): expected results are values; transport errors and bugs throw
 * the FailureError. `conflict` (placement.concurrent_update: a concurrent write moved a
 * generation) may succeed if tried again at once; `no_capacity`
 * (placement.allocation.capacity_exceeded) will not succeed on that provider; `group_policy`
 * (placement.claim.group_policy) neither: the consumer's server group forbids that host given the
 * members' claims now. On any of these, nothing was written.
 */
export type ClaimOutcome =
  | { readonly kind: 'claimed'; readonly consumerGeneration: number }
  | { readonly kind: 'conflict'; readonly message: string }
  | {
      readonly kind: 'no_capacity';
      readonly message: string;
      readonly resourceClass: string | undefined;
      readonly providerUuid: string | undefined;
    }
  /** `providerUuid` is the compute node concerned. */
  | {
      readonly kind: 'group_policy';
      readonly message: string;
      readonly groupUuid: string | undefined;
      readonly providerUuid: string | undefined;
    };

const CLAIMED_NO_GENERATION = 0;

/**
 * A claim's outcome from placement's answer: no Failure is `claimed`, the expected Failures are
 * their outcomes, any other Failure is `undefined` (the caller throws it). Pure; one mapping for
 * Claim and for each result of ClaimMany.
 */
export function claimOutcome(failure: Failure | undefined, consumerGeneration = CLAIMED_NO_GENERATION): ClaimOutcome | undefined {
  if (failure === undefined) return { kind: 'claimed', consumerGeneration };
  if (failure.code === PLACEMENT_CONCURRENT_UPDATE) return { kind: 'conflict', message: failure.message };
  if (failure.code === PLACEMENT_CAPACITY_EXCEEDED) {
    return {
      kind: 'no_capacity',
      message: failure.message,
      resourceClass: failure.metadata.resource_class,
      providerUuid: failure.metadata.resource_provider_uuid,
    };
  }
  if (failure.code === PLACEMENT_GROUP_POLICY) {
    return {
      kind: 'group_policy',
      message: failure.message,
      groupUuid: failure.metadata.group_uuid,
      providerUuid: failure.metadata.resource_provider_uuid,
    };
  }
  return undefined;
}
