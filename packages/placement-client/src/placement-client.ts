import { createGrpcClient, isFailureError, type GrpcClient } from '@cellsched/grpc';
import {
  PlacementServiceClient,
  type ConsumerAllocations,
  type ConsumerGroup,
  type GetAllocationCandidatesRequest,
  type GetAllocationCandidatesResponse,
  type ProviderAllocation,
} from '@cellsched/wire';
import type { Logger } from 'pino';
import { ClaimBatcher, type ClaimBatcherOptions } from './claim-batcher';
import { claimOutcome, type ClaimOutcome } from './claim-outcome';

export interface PlacementClientOptions {
  /** `host:port` of each placement gRPC replica; calls start round-robin, retried ones move on. */
  readonly addresses: readonly string[];
  /** Per-attempt deadline (default 5 s). */
  readonly deadlineMs?: number;
  /** Attempts of a retryable call across replicas (default 3). */
  readonly maxAttempts?: number;
  readonly logger?: Logger;
}

/** The generated promise client this class wraps. */
export type PlacementGrpc = GrpcClient<typeof PlacementServiceClient.service>;

/**
 * The one typed client of placement's gRPC `PlacementService` over its replicas, for every
 * service that calls it (the scheduler's candidates and claims, the conductors' claims and
 * releases, the audit). Read-only calls, Release and replace-Claims are idempotent and retried on
 * another replica on UNAVAILABLE; a non-replace claim is never retried (it may have been applied).
 * Expected outcomes (concurrent update, no capacity, a server group's policy) are values, not exceptions. Callers that
 * claim concurrently (the scheduler) share calls through {@link claimBatcher}.
 */
export class PlacementClient {
  private readonly grpc: PlacementGrpc;

  /** Options open channels to the replicas; `{ grpc }` wraps an existing promise client (unit tests pass a fake). */
  constructor(opts: PlacementClientOptions | { readonly grpc: PlacementGrpc }) {
    this.grpc =
      'grpc' in opts
        ? opts.grpc
        : createGrpcClient(PlacementServiceClient, {
            addresses: opts.addresses,
            deadlineMs: opts.deadlineMs ?? 5000,
            maxAttempts: opts.maxAttempts ?? 3,
            idempotent: [
              'getAllocationCandidates',
              'release',
              'getConsumerAllocations',
              'getUsages',
              'claimMove',
              'revertMove',
              'listProviderConsumers',
            ],
            ...(opts.logger === undefined ? {} : { logger: opts.logger }),
          });
  }

  /**
   * Writes the consumer's allocations in one transaction. With `replace` the consumer's
   * current allocations (on any provider) are swapped for these atomically, whatever its
   * generation: safe to repeat, and the way to move a claim from a failed host to an
   * alternate without a window where the instance holds nothing. With `group`, placement keeps
   * that server group's policy atomically with the claim (`group_policy` outcome: nothing written).
   */
  async claim(consumer: ConsumerAllocations, opts: { replace: boolean; group?: ConsumerGroup }): Promise<ClaimOutcome> {
    try {
      const r = await this.grpc.claim({ consumer, replace: opts.replace, group: opts.group }, { idempotent: opts.replace });
      return { kind: 'claimed', consumerGeneration: r.consumerGeneration };
    } catch (err) {
      const outcome = isFailureError(err) ? claimOutcome(err.failure) : undefined;
      if (outcome === undefined) throw err;
      return outcome;
    }
  }

  /**
   * A move's claim (PlacementService.ClaimMove, one transaction): the instance's current
   * allocations become `migrationUuid`'s unless that consumer holds some already (a retry, or the
   * next alternate of the same move), and `destination` (the instance consumer) holds the
   * destination's. Same outcomes as {@link claim}; `sourceMoved` says whether this call moved the
   * source. Idempotent (retried on another replica).
   */
  async claimMove(
    destination: ConsumerAllocations,
    migrationUuid: string,
    group?: ConsumerGroup,
  ): Promise<ClaimOutcome & { readonly sourceMoved?: boolean }> {
    try {
      const r = await this.grpc.claimMove({ destination, migrationUuid, group });
      return { kind: 'claimed', consumerGeneration: r.consumerGeneration, sourceMoved: r.sourceMoved };
    } catch (err) {
      const outcome = isFailureError(err) ? claimOutcome(err.failure) : undefined;
      if (outcome === undefined) throw err;
      return outcome;
    }
  }

  /**
   * Undoes a move's claim (PlacementService.RevertMove, one transaction): the migration's
   * allocations become the instance's again. Returns false when the migration held nothing (already
   * reverted or never claimed). Idempotent (retried on another replica).
   */
  async revertMove(instanceUuid: string, migrationUuid: string): Promise<boolean> {
    return (await this.grpc.revertMove({ instanceUuid, migrationUuid })).reverted;
  }

  /**
   * A batcher of this client's claims: concurrent claims share ClaimMany calls (see
   * {@link ClaimBatcher}). Same outcomes as {@link claim}. One per caller that wants its own stats.
   */
  claimBatcher(options: ClaimBatcherOptions = {}): ClaimBatcher {
    return new ClaimBatcher(this.grpc, options);
  }

  /**
   * Placement's `GET /allocation_candidates` (GetAllocationCandidates). Read-only, retried on
   * another replica. Throws a FailureError on transport errors or a bad query (`INVALID_ARGUMENT`).
   */
  async allocationCandidates(query: GetAllocationCandidatesRequest): Promise<GetAllocationCandidatesResponse> {
    return this.grpc.getAllocationCandidates(query);
  }

  /** Deletes these consumers' allocations. Idempotent; returns the consumers that held something. */
  async release(consumerUuids: readonly string[]): Promise<string[]> {
    if (consumerUuids.length === 0) return [];
    return (await this.grpc.release({ consumerUuids: [...consumerUuids] })).released;
  }

  /** A consumer's allocations, or undefined when it holds none. Read-only. */
  async consumerAllocations(
    consumerUuid: string,
  ): Promise<{ allocations: ProviderAllocation[]; generation: number | undefined } | undefined> {
    const r = await this.grpc.getConsumerAllocations({ consumerUuid });
    if (!r.exists || r.consumer === undefined || r.consumer.allocations.length === 0) return undefined;
    return { allocations: r.consumer.allocations, generation: r.consumer.consumerGeneration };
  }

  /**
   * The consumers holding allocations on each of these providers (provider uuid → sorted consumer
   * uuids), asked in calls of at most `batch` providers; a provider placement does not know is
   * absent. Read-only.
   */
  async providerConsumers(providerUuids: readonly string[], batch = 1000): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (let i = 0; i < providerUuids.length; i += batch) {
      const r = await this.grpc.listProviderConsumers({ providerUuids: providerUuids.slice(i, i + batch) });
      for (const p of r.providers) out.set(p.providerUuid, p.consumerUuids);
    }
    return out;
  }

  /** Usages of a provider by resource class. Read-only. */
  async providerUsages(resourceProviderUuid: string): Promise<Record<string, number>> {
    return (await this.grpc.getUsages({ resourceProviderUuid, projectId: '', userId: '', consumerType: '' })).usages;
  }

  /** Closes the channels. */
  close(): void {
    this.grpc.close();
  }
}
