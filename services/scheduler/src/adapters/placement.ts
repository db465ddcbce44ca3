/**
 * The placement side of the ports, over the gRPC PlacementService: candidates (HostStateSnapshot)
 * and claims (Claimer). Placement's atomic claim is the single source of truth for capacity.
 */
import { FailureError, type GrpcClient, GrpcStatus, UNAVAILABLE_FAILURE_CODE, createGrpcClient, isFailureError } from '@cellsched/grpc';
import {
  type AllocationCandidate, type ClaimRequest, type ConsumerAllocations, type Failure, type GetAllocationCandidatesRequest,
  type GetAllocationCandidatesResponse, FAILURE_CODES, PlacementServiceClient,
} from '@cellsched/wire';
import { inContext, type SavedContext, savedContext, spanEvent } from '@cellsched/telemetry';
import type { Logger } from 'pino';
import type { ClaimConsumer, ClaimOutcome, Claimer } from '../ports';

/** A promise client of placement's gRPC service over its replicas. */
export type PlacementClient = GrpcClient<typeof PlacementServiceClient.service>;

/** Placement's failure codes the claimer branches on (published by placement, never changed). */
export const PLACEMENT_CONCURRENT_UPDATE = FAILURE_CODES.placement.concurrentUpdate;
export const PLACEMENT_CAPACITY_EXCEEDED = FAILURE_CODES.placement.capacityExceeded;

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

/** One claim waiting for its turn to go to placement. */
interface PendingClaim {
  readonly request: ClaimRequest;
  readonly candidate: AllocationCandidate;
  readonly resolve: (outcome: ClaimOutcome) => void;
  readonly reject: (err: unknown) => void;
  /** The deciding request's trace: its call (or its batch's) and its outcome are recorded there. */
  readonly ctx: SavedContext;
}

/** Most claims in one ClaimMany call. */
export const DEFAULT_CLAIMS_PER_CALL = 16;
/**
 * Calls to placement in flight at once per replica; claims arriving while they all run wait and
 * go together in the next one. NOTE: 2, not 1: with one call in flight a claim waited a whole
 * round trip before it could leave (10,000 hosts, 1 replica, 8 clients: 204-212 decisions/s with
 * 1, 240-241/s with 2, 215-230/s with 4, at the same CPU per decision).
 */
export const DEFAULT_CLAIM_CALLS_IN_FLIGHT = 2;

/**
 * Claimer over placement gRPC: Claim (replace as asked) and Release.
 * ABORTED `placement.concurrent_update` → `conflict`; FAILED_PRECONDITION
 * `placement.allocation.capacity_exceeded` → `no_capacity`; anything else throws (the core then
 * releases the request's consumers). Release is idempotent and retried on another replica.
 *
 * Claims of concurrent decisions that arrive while `maxInFlight` calls to placement are in flight
 * go together in the next call, a ClaimMany (one call, one placement statement and commit for all
 * of them; each claim still answered on its own, exactly as Claim would answer it). A lone claim
 * goes at once as a Claim. Why: a decision's claim was its only per-decision call to placement,
 * and each gRPC call costs both processes a few hundred microseconds of CPU and a wake-up.
 */
export class PlacementClaimer implements Claimer {
  /** Claim attempts by outcome (observability: wasted claims show a herd on stale views), and calls made. */
  readonly stats = { ok: 0, conflict: 0, noCapacity: 0, released: 0, claimCalls: 0, claimManyCalls: 0 };
  private readonly queue: PendingClaim[] = [];
  /** Calls to placement in flight, and whether a send is already scheduled for this task's claims. */
  private inFlight = 0;
  private scheduled = false;
  /** Placement answered UNIMPLEMENTED to ClaimMany (an older placement): claims go one by one. */
  private claimManyUnsupported = false;

  /** `onClaimed` sees every successful claim (the candidate cache charges it to its copy). */
  constructor(private readonly client: PlacementClient, private readonly onClaimed: (c: AllocationCandidate) => void = () => undefined,
    private readonly maxPerCall = DEFAULT_CLAIMS_PER_CALL, private readonly maxInFlight = DEFAULT_CLAIM_CALLS_IN_FLIGHT) {}

  claim(consumer: ClaimConsumer, candidate: AllocationCandidate, options: { readonly replace: boolean }): Promise<ClaimOutcome> {
    return new Promise<ClaimOutcome>((resolve, reject) => {
      this.queue.push({ request: { consumer: consumerAllocations(consumer, candidate), replace: options.replace }, candidate, resolve, reject, ctx: savedContext() });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  /** Sends what is queued, as long as fewer than `maxInFlight` calls are in flight; each call's end sends what queued meanwhile. */
  private send(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.splice(0, this.claimManyUnsupported ? 1 : this.maxPerCall);
      this.inFlight += 1;
      const call = batch.length === 1 ? this.claimOne(batch[0] as PendingClaim) : this.claimMany(batch);
      void call.finally(() => {
        this.inFlight -= 1;
        this.send();
      });
    }
  }

  private async claimOne(p: PendingClaim): Promise<void> {
    this.stats.claimCalls += 1;
    try {
      // NOTE: the send loop runs in the context of the claim that started it; each call goes in its own claim's trace
      await inContext(p.ctx, () => this.client.claim(p.request, { idempotent: p.request.replace }));
      this.settle(p, undefined, 1);
    } catch (err) {
      if (isFailureError(err)) this.settle(p, err.failure, 1, err);
      else p.reject(err);
    }
  }

  private async claimMany(batch: readonly PendingClaim[]): Promise<void> {
    this.stats.claimManyCalls += 1;
    let results;
    try {
      // the call's span goes in the first claim's trace; every claim's own trace gets an event with its outcome (settle)
      const first = batch[0] as PendingClaim;
      results = (await inContext(first.ctx, () => this.client.claimMany({ claims: batch.map((p) => p.request) }, { idempotent: batch.every((p) => p.request.replace) }))).results;
    } catch (err) {
      if (isFailureError(err) && err.status === GrpcStatus.UNIMPLEMENTED) {
        this.claimManyUnsupported = true;
        for (const p of batch) await this.claimOne(p);
        return;
      }
      for (const p of batch) p.reject(err);
      return;
    }
    const again: PendingClaim[] = [];
    batch.forEach((p, i) => {
      const r = results[i];
      if (r === undefined) p.reject(new Error(`placement ClaimMany answered ${results.length} results for ${batch.length} claims`));
      // NOTE: placement lost its database under this claim (nothing written): as a Claim it would
      // have been UNAVAILABLE and retried by the client (on another replica, with backoff); so it is.
      else if (r.failure?.code === UNAVAILABLE_FAILURE_CODE && r.failure.retryable && p.request.replace) again.push(p);
      else this.settle(p, r.failure, batch.length);
    });
    for (const p of again) await this.claimOne(p);
  }

  /** Answers one claim from its Failure (none: claimed). */
  private settle(p: PendingClaim, failure: Failure | undefined, batchSize: number, err?: unknown): void {
    inContext(p.ctx, () => spanEvent('scheduler.claim', {
      'cellsched.scheduler.providers': p.request.consumer?.allocations.map((a) => a.resourceProviderUuid).join(','),
      'cellsched.scheduler.outcome': failure === undefined ? 'claimed' : failure.code,
      'cellsched.scheduler.call': batchSize > 1 ? `ClaimMany of ${batchSize}` : 'Claim',
    }));
    if (failure === undefined) {
      this.stats.ok += 1;
      this.onClaimed(p.candidate);
      p.resolve({ kind: 'ok' });
    } else if (failure.code === PLACEMENT_CONCURRENT_UPDATE) {
      this.stats.conflict += 1;
      p.resolve({ kind: 'conflict' });
    } else if (failure.code === PLACEMENT_CAPACITY_EXCEEDED) {
      this.stats.noCapacity += 1;
      p.resolve({ kind: 'no_capacity' });
    } else {
      p.reject(err ?? new FailureError(failure));
    }
  }

  async release(consumerUuids: readonly string[]): Promise<void> {
    if (consumerUuids.length === 0) return;
    const r = await this.client.release({ consumerUuids: [...consumerUuids] });
    this.stats.released += r.released.length;
  }
}
