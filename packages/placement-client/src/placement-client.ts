import { createGrpcClient, isFailureError, type GrpcClient } from '@cellsched/grpc';
import { FAILURE_CODES, PlacementServiceClient, type ConsumerAllocations, type ProviderAllocation } from '@cellsched/wire';
import type { Logger } from 'pino';

/** Placement's published failure codes this client turns into outcomes. */
export const PLACEMENT_CONCURRENT_UPDATE = FAILURE_CODES.placement.concurrentUpdate;
export const PLACEMENT_CAPACITY_EXCEEDED = FAILURE_CODES.placement.capacityExceeded;

/** The outcome of a claim: expected results are values; transport errors and bugs throw FailureError. */
export type ClaimOutcome =
  | { readonly kind: 'claimed'; readonly consumerGeneration: number }
  | { readonly kind: 'conflict'; readonly message: string }
  | { readonly kind: 'no_capacity'; readonly message: string; readonly resourceClass: string | undefined; readonly providerUuid: string | undefined };

export interface PlacementClientOptions {
  /** `host:port` of each placement gRPC replica; calls start round-robin, retried ones move on. */
  readonly addresses: readonly string[];
  /** Per-attempt deadline (default 5 s). */
  readonly deadlineMs?: number;
  /** Attempts of a retryable call across replicas (default 3). */
  readonly maxAttempts?: number;
  readonly logger?: Logger;
}

/**
 * A typed client of placement's gRPC `PlacementService` over its replicas. Read-only calls,
 * Release and replace-Claims are idempotent and retried on another replica on UNAVAILABLE;
 * a non-replace claim is never retried (it may have been applied). Expected outcomes
 * (concurrent update, no capacity) are values, not exceptions.
 */
export class PlacementClient {
  private readonly grpc: GrpcClient<typeof PlacementServiceClient.service>;

  constructor(opts: PlacementClientOptions) {
    this.grpc = createGrpcClient(PlacementServiceClient, {
      addresses: opts.addresses, deadlineMs: opts.deadlineMs ?? 5000, maxAttempts: opts.maxAttempts ?? 3,
      idempotent: ['getAllocationCandidates', 'release', 'getConsumerAllocations', 'getUsages'],
      ...(opts.logger === undefined ? {} : { logger: opts.logger }),
    });
  }

  /**
   * Writes the consumer's allocations in one transaction. With `replace` the consumer's
   * current allocations (on any provider) are swapped for these atomically, whatever its
   * generation: safe to repeat, and the way to move a claim from a failed host to an
   * alternate without a window where the instance holds nothing.
   */
  async claim(consumer: ConsumerAllocations, opts: { replace: boolean }): Promise<ClaimOutcome> {
    try {
      const r = await this.grpc.claim({ consumer, replace: opts.replace }, { idempotent: opts.replace });
      return { kind: 'claimed', consumerGeneration: r.consumerGeneration };
    } catch (err) {
      if (isFailureError(err) && err.code === PLACEMENT_CONCURRENT_UPDATE) return { kind: 'conflict', message: err.message };
      if (isFailureError(err) && err.code === PLACEMENT_CAPACITY_EXCEEDED) {
        return { kind: 'no_capacity', message: err.message, resourceClass: err.failure.metadata.resource_class, providerUuid: err.failure.metadata.resource_provider_uuid };
      }
      throw err;
    }
  }

  /** Deletes these consumers' allocations. Idempotent; returns the consumers that held something. */
  async release(consumerUuids: readonly string[]): Promise<string[]> {
    if (consumerUuids.length === 0) return [];
    return (await this.grpc.release({ consumerUuids: [...consumerUuids] })).released;
  }

  /** A consumer's allocations, or undefined when it holds none. Read-only. */
  async consumerAllocations(consumerUuid: string): Promise<{ allocations: ProviderAllocation[]; generation: number | undefined } | undefined> {
    const r = await this.grpc.getConsumerAllocations({ consumerUuid });
    if (!r.exists || r.consumer === undefined || r.consumer.allocations.length === 0) return undefined;
    return { allocations: r.consumer.allocations, generation: r.consumer.consumerGeneration };
  }

  /** Usages of a provider by resource class. Read-only. */
  async providerUsages(resourceProviderUuid: string): Promise<Record<string, number>> {
    return (await this.grpc.getUsages({ resourceProviderUuid, projectId: '', userId: '', consumerType: '' })).usages;
  }

  /** Closes the channels. */
  close(): void { this.grpc.close(); }
}
