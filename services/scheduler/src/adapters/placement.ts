/**
 * The placement side of the ports, over `@cellsched/placement-client` (the one placement gRPC
 * client): candidates (HostStateSnapshot) and claims (Claimer). Placement's atomic claim is the
 * single source of truth for capacity.
 */
import type { ClaimBatcher, ClaimOutcome, PlacementClient, SettledClaim } from '@cellsched/placement-client';
import { spanEvent } from '@cellsched/telemetry';
import type {
  AllocationCandidate,
  ConsumerAllocations,
  ConsumerGroup,
  GetAllocationCandidatesRequest,
  GetAllocationCandidatesResponse,
} from '@cellsched/wire';
import type { ClaimConsumer, Claimer } from '../ports';

/** GetAllocationCandidates as the snapshot's candidate source. Throws FailureError on transport errors or bad queries. */
export function placementCandidates(
  client: PlacementClient,
): (q: GetAllocationCandidatesRequest) => Promise<GetAllocationCandidatesResponse> {
  return (q) => client.allocationCandidates(q);
}

function consumerAllocations(consumer: ClaimConsumer, candidate: AllocationCandidate): ConsumerAllocations {
  return {
    consumerUuid: consumer.consumerUuid,
    projectId: consumer.projectId,
    userId: consumer.userId,
    consumerType: 'INSTANCE',
    allocations: candidate.allocations.map((a) => ({ resourceProviderUuid: a.resourceProviderUuid, resources: { ...a.resources } })),
  };
}

function consumerGroup(consumer: ClaimConsumer): ConsumerGroup | undefined {
  const g = consumer.group;
  return g === undefined ? undefined : { uuid: g.uuid, policy: g.policy, maxServerPerHost: g.maxServerPerHost };
}

/** Each claim's outcome as an event of the deciding request's trace (the batcher runs this in that trace). */
function claimEvent(s: SettledClaim): void {
  spanEvent('scheduler.claim', {
    'cellsched.scheduler.providers': s.request.consumer?.allocations.map((a) => a.resourceProviderUuid).join(','),
    'cellsched.scheduler.outcome': s.outcome,
    'cellsched.scheduler.call': s.call,
  });
}

/**
 * Claimer over the placement client's {@link ClaimBatcher}: the claims of concurrent decisions
 * share ClaimMany calls (one placement statement and commit for all of them, each still answered on
 * its own); outcomes as the client's (`claimed`, `conflict`, `no_capacity`, `group_policy`: each
 * claim carries the consumer's server group and placement keeps its policy atomically), anything
 * else throws (the core then releases the request's consumers, or reverts the move). Release,
 * ClaimMove and RevertMove are idempotent and retried on another replica. NOTE: the hot path is what it was when the batching lived here: one ClaimRequest and one
 * promise per claim, a closure instead of the candidate in the queue entry, the same outcome object.
 */
export class PlacementClaimer implements Claimer {
  private readonly batcher: ClaimBatcher;
  private released = 0;

  /** `onClaimed` sees every successful claim (the candidate cache charges it to its copy). */
  constructor(
    private readonly client: PlacementClient,
    private readonly onClaimed: (c: AllocationCandidate) => void = () => undefined,
    options: { readonly maxPerCall?: number; readonly maxInFlight?: number } = {},
  ) {
    this.batcher = client.claimBatcher({ ...options, onSettled: claimEvent });
  }

  /** Claim attempts by outcome and calls made (the batcher's), and consumers released. */
  get stats(): ClaimBatcher['stats'] & { readonly released: number } {
    return { ...this.batcher.stats, released: this.released };
  }

  claim(consumer: ClaimConsumer, candidate: AllocationCandidate, options: { readonly replace: boolean }): Promise<ClaimOutcome> {
    return this.batcher.claim(
      { consumer: consumerAllocations(consumer, candidate), replace: options.replace, group: consumerGroup(consumer) },
      () => this.onClaimed(candidate),
    );
  }

  /**
   * A move's claim, straight to placement's ClaimMove (not batched: moves are rare, and ClaimMany
   * carries no migration); the candidate cache is charged like a claim's.
   */
  async claimMove(consumer: ClaimConsumer, candidate: AllocationCandidate, migrationUuid: string): Promise<ClaimOutcome> {
    const outcome = await this.client.claimMove(consumerAllocations(consumer, candidate), migrationUuid, consumerGroup(consumer));
    spanEvent('scheduler.claim_move', {
      'cellsched.scheduler.providers': candidate.allocations.map((a) => a.resourceProviderUuid).join(','),
      'cellsched.scheduler.outcome': outcome.kind,
      'cellsched.migration_uuid': migrationUuid,
    });
    if (outcome.kind === 'claimed') this.onClaimed(candidate);
    return outcome;
  }

  async revertMove(instanceUuid: string, migrationUuid: string): Promise<void> {
    await this.client.revertMove(instanceUuid, migrationUuid);
  }

  async release(consumerUuids: readonly string[]): Promise<void> {
    if (consumerUuids.length === 0) return;
    this.released += (await this.client.release(consumerUuids)).length;
  }
}
