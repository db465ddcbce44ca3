/**
 * The placement side of the ports, over the gRPC PlacementService: candidates (HostStateSnapshot)
 * and claims (Claimer). Placement's atomic claim is the single source of truth for capacity.
 */
import { type GrpcClient, createGrpcClient, isFailureError } from '@cellsched/grpc';
import {
  type AllocationCandidate, type ConsumerAllocations, type GetAllocationCandidatesRequest, type GetAllocationCandidatesResponse,
  PlacementServiceClient,
} from '@cellsched/wire';
import type { Logger } from 'pino';
import type { ClaimConsumer, ClaimOutcome, Claimer } from '../ports';

/** A promise client of placement's gRPC service over its replicas. */
export type PlacementClient = GrpcClient<typeof PlacementServiceClient.service>;

/** Placement's failure codes the claimer branches on (published by placement, never changed). */
export const PLACEMENT_CONCURRENT_UPDATE = 'placement.concurrent_update';
export const PLACEMENT_CAPACITY_EXCEEDED = 'placement.allocation.capacity_exceeded';

/**
 * A placement client with the read-only and idempotent methods marked for retry on another
 * replica (candidates, release, consumer allocations, and Claim: every claim is sent with
 * replace=true, so running it twice leaves one claim).
 */
export function createPlacementClient(opts: { addresses: readonly string[]; deadlineMs: number; logger?: Logger }): PlacementClient {
  return createGrpcClient(PlacementServiceClient, {
    addresses: opts.addresses, deadlineMs: opts.deadlineMs, maxAttempts: 3,
    idempotent: ['getAllocationCandidates', 'release', 'getConsumerAllocations', 'getUsages'],
    ...(opts.logger === undefined ? {} : { logger: opts.logger }),
  });
}

/** GetAllocationCandidates as the snapshot's candidate source. Throws FailureError on transport errors or bad queries. */
export function placementCandidates(client: PlacementClient): (q: GetAllocationCandidatesRequest) => Promise<GetAllocationCandidatesResponse> {
  return (q) => client.getAllocationCandidates(q);
}

function consumerAllocations(consumer: ClaimConsumer, candidate: AllocationCandidate): ConsumerAllocations {
  return {
    consumerUuid: consumer.consumerUuid, projectId: consumer.projectId, userId: consumer.userId, consumerType: 'INSTANCE',
    allocations: candidate.allocations.map((a) => ({ resourceProviderUuid: a.resourceProviderUuid, resources: { ...a.resources } })),
  };
}

/**
 * Claimer over placement gRPC: Claim (replace as asked) and Release.
 * ABORTED `placement.concurrent_update` → `conflict`; FAILED_PRECONDITION
 * `placement.allocation.capacity_exceeded` → `no_capacity`; anything else throws (the core then
 * releases the request's consumers). Release is idempotent and retried on another replica.
 */
export class PlacementClaimer implements Claimer {
  /** Claim attempts by outcome (observability: wasted claims show a herd on stale views). */
  readonly stats = { ok: 0, conflict: 0, noCapacity: 0, released: 0 };

  /** `onClaimed` sees every successful claim (the candidate cache charges it to its copy). */
  constructor(private readonly client: PlacementClient, private readonly onClaimed: (c: AllocationCandidate) => void = () => undefined) {}

  async claim(consumer: ClaimConsumer, candidate: AllocationCandidate, options: { readonly replace: boolean }): Promise<ClaimOutcome> {
    try {
      await this.client.claim({ consumer: consumerAllocations(consumer, candidate), replace: options.replace },
        { idempotent: options.replace });
      this.stats.ok += 1;
      this.onClaimed(candidate);
      return { kind: 'ok' };
    } catch (err) {
      if (isFailureError(err) && err.code === PLACEMENT_CONCURRENT_UPDATE) {
        this.stats.conflict += 1;
        return { kind: 'conflict' };
      }
      if (isFailureError(err) && err.code === PLACEMENT_CAPACITY_EXCEEDED) {
        this.stats.noCapacity += 1;
        return { kind: 'no_capacity' };
      }
      throw err;
    }
  }

  async release(consumerUuids: readonly string[]): Promise<void> {
    if (consumerUuids.length === 0) return;
    const r = await this.client.release({ consumerUuids: [...consumerUuids] });
    this.stats.released += r.released.length;
  }
}
