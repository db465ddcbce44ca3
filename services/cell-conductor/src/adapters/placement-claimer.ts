import { AllocationRequestError, instanceConsumer, parseAllocationRequest, type ClaimOutcome, type PlacementClient } from '@cellsched/placement-client';
import type { Selection } from '@cellsched/wire';
import type { ClaimConsumer, InstanceClaimer } from '../ports';

/** Tries of a claim that keeps losing a provider-generation race before the alternate is skipped. */
const CONFLICT_TRIES = 5;

/**
 * {@link InstanceClaimer} over placement gRPC. Every claim is a replace (idempotent; moves the
 * consumer's allocation from the failed host in the same transaction). A concurrent update
 * is retried in a short bounded loop, as the scheduler does; no capacity skips the host.
 */
export class PlacementInstanceClaimer implements InstanceClaimer {
  constructor(private readonly placement: PlacementClient) {}

  async claimSelection(consumer: ClaimConsumer, selection: Selection): Promise<ClaimOutcome | { kind: 'invalid'; message: string }> {
    let allocations;
    try {
      allocations = parseAllocationRequest(selection.allocationRequest?.json ?? '');
    } catch (err) {
      if (err instanceof AllocationRequestError) return { kind: 'invalid', message: err.message };
      throw err;
    }
    let outcome: ClaimOutcome = { kind: 'conflict', message: 'not tried' };
    for (let i = 0; i < CONFLICT_TRIES && outcome.kind !== 'claimed'; i++) {
      outcome = await this.placement.claim(instanceConsumer(consumer, allocations), { replace: true });
      if (outcome.kind === 'no_capacity') break;
    }
    return outcome;
  }

  async release(consumerUuid: string): Promise<void> {
    await this.placement.release([consumerUuid]);
  }
}
