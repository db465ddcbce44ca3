import {
  AllocationRequestError,
  instanceConsumer,
  parseAllocationRequest,
  type ClaimOutcome,
  type PlacementClient,
} from '@cellsched/placement-client';
import type { ConsumerGroup, InstanceGroup, Selection } from '@cellsched/wire';
import type { ClaimConsumer, InstanceClaimer, MovePlacement } from '../ports';

/** Tries of a claim that keeps losing a provider-generation race before the alternate is skipped. */
const CONFLICT_TRIES = 5;

/** The claim's group as placement takes it (the members and hosts of the spec are not sent: placement reads its own). */
function consumerGroup(g: InstanceGroup | undefined): ConsumerGroup | undefined {
  return g === undefined ? undefined : { uuid: g.uuid, policy: g.policy, maxServerPerHost: g.maxServerPerHost };
}

/**
 * {@link InstanceClaimer} over placement gRPC. Every claim is a replace (idempotent; moves the
 * consumer's allocation from the failed host in the same transaction) and carries the instance's
 * server group, so placement refuses an alternate the group's policy forbids now (another member
 * took it since the scheduler chose it). A concurrent update is retried in a short bounded loop,
 * as the scheduler does; no capacity or the group's policy skips the host.
 */
export class PlacementInstanceClaimer implements InstanceClaimer, MovePlacement {
  constructor(private readonly placement: PlacementClient) {}

  /** Tries `claim` while it loses a provider-generation race (a bounded loop); the Selection's unreadable allocation request is `invalid`. */
  private async withConflictRetry(
    selection: Selection,
    claim: (allocations: ReturnType<typeof parseAllocationRequest>) => Promise<ClaimOutcome>,
  ): Promise<ClaimOutcome | { kind: 'invalid'; message: string }> {
    let allocations;
    try {
      allocations = parseAllocationRequest(selection.allocationRequest?.json ?? '');
    } catch (err) {
      if (err instanceof AllocationRequestError) return { kind: 'invalid', message: err.message };
      throw err;
    }
    let outcome: ClaimOutcome = { kind: 'conflict', message: 'not tried' };
    for (let i = 0; i < CONFLICT_TRIES && outcome.kind !== 'claimed'; i++) {
      outcome = await claim(allocations);
      if (outcome.kind === 'no_capacity' || outcome.kind === 'group_policy') break;
    }
    return outcome;
  }

  claimSelection(consumer: ClaimConsumer, selection: Selection): Promise<ClaimOutcome | { kind: 'invalid'; message: string }> {
    return this.withConflictRetry(selection, (a) =>
      this.placement.claim(instanceConsumer(consumer, a), { replace: true, group: consumerGroup(consumer.group) }),
    );
  }

  /** ClaimMove of an alternate: the migration keeps the source, the instance's allocations become the alternate's. */
  claimMove(
    consumer: ClaimConsumer,
    selection: Selection,
    migrationUuid: string,
  ): Promise<ClaimOutcome | { kind: 'invalid'; message: string }> {
    return this.withConflictRetry(selection, (a) =>
      this.placement.claimMove(instanceConsumer(consumer, a), migrationUuid, consumerGroup(consumer.group)),
    );
  }

  async revertMove(instanceUuid: string, migrationUuid: string): Promise<void> {
    await this.placement.revertMove(instanceUuid, migrationUuid);
  }

  async release(consumerUuid: string): Promise<void> {
    await this.placement.release([consumerUuid]);
  }
}
