import { FailureError, GrpcStatus, isFailureError, UNAVAILABLE_FAILURE_CODE, type GrpcClient } from '@cellsched/grpc';
import { inContext, savedContext, type SavedContext } from '@cellsched/telemetry';
import type { ClaimRequest, Failure, PlacementServiceClient } from '@cellsched/wire';
import { claimOutcome, type ClaimOutcome } from './claim-outcome';

/** The two calls a batcher makes (the placement gRPC client; a fake in tests). */
export type ClaimTransport = Pick<GrpcClient<typeof PlacementServiceClient.service>, 'claim' | 'claimMany'>;

/** How one claim went, for an observer: `claimed` or the Failure code; and the call that carried it. */
export interface SettledClaim {
  readonly request: ClaimRequest;
  readonly outcome: string;
  /** `Claim`, or `ClaimMany of N`. */
  readonly call: string;
}

export interface ClaimBatcherOptions {
  /** Most claims in one ClaimMany call (default 16). */
  readonly maxPerCall?: number;
  /** Calls in flight at once (default 2). */
  readonly maxInFlight?: number;
  /** Sees each settled claim, run in the trace context of the claim's caller (spans and events go there). */
  readonly onSettled?: (s: SettledClaim) => void;
}

/** One claim waiting for its turn to go to placement. */
interface PendingClaim {
  readonly request: ClaimRequest;
  readonly resolve: (outcome: ClaimOutcome) => void;
  readonly reject: (err: unknown) => void;
  /** Called once the claim succeeded (before `resolve`; no extra promise per claim). */
  readonly onClaimed: (() => void) | undefined;
  /** The caller's trace: its call (or its batch's) and its outcome are recorded there. */
  readonly ctx: SavedContext;
}

/** Most claims in one ClaimMany call. */
export const DEFAULT_CLAIMS_PER_CALL = 16;
/**
 * Calls to placement in flight at once per batcher; claims arriving while they all run wait and
 * go together in the next one. NOTE: 2, not 1: with one call in flight a claim waited a whole
 * round trip before it could leave (10,000 hosts, 1 scheduler replica, 8 clients: 204-212
 * decisions/s with 1, 240-241/s with 2, 215-230/s with 4, at the same CPU per decision).
 */
export const DEFAULT_CLAIM_CALLS_IN_FLIGHT = 2;

/**
 * Claims of concurrent callers (the scheduler's decisions) sent together: a claim that arrives
 * while `maxInFlight` calls are in flight goes in the next call, a ClaimMany (one call, one
 * placement statement and commit for all of them; each claim still answered on its own, exactly
 * as Claim would answer it). A lone claim goes at once as a Claim. Why: a decision's claim was its
 * only per-decision call to placement, and each gRPC call costs both processes a few hundred
 * microseconds of CPU and a wake-up. Outcomes as {@link claimOutcome}; any other Failure rejects
 * that claim. A ClaimMany is retried on another replica only if every claim in it is a replace
 * (idempotent); an older placement without ClaimMany (UNIMPLEMENTED) gets claims one by one.
 */
export class ClaimBatcher {
  /** Claim attempts by outcome (observability: wasted claims show a herd on stale views), and calls made. */
  readonly stats = { claimed: 0, conflict: 0, noCapacity: 0, groupPolicy: 0, claimCalls: 0, claimManyCalls: 0 };
  private readonly queue: PendingClaim[] = [];
  private inFlight = 0;
  /** Whether a send is already scheduled for this task's claims. */
  private scheduled = false;
  /** Placement answered UNIMPLEMENTED to ClaimMany (an older placement): claims go one by one. */
  private claimManyUnsupported = false;
  private readonly maxPerCall: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly transport: ClaimTransport,
    private readonly options: ClaimBatcherOptions = {},
  ) {
    this.maxPerCall = options.maxPerCall ?? DEFAULT_CLAIMS_PER_CALL;
    this.maxInFlight = options.maxInFlight ?? DEFAULT_CLAIM_CALLS_IN_FLIGHT;
  }

  /** Queues one claim; `onClaimed` runs when it succeeded. Rejects with the FailureError of an unexpected failure. */
  claim(request: ClaimRequest, onClaimed?: () => void): Promise<ClaimOutcome> {
    return new Promise<ClaimOutcome>((resolve, reject) => {
      this.queue.push({ request, resolve, reject, onClaimed, ctx: savedContext() });
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
      const r = await inContext(p.ctx, () => this.transport.claim(p.request, { idempotent: p.request.replace }));
      this.settle(p, undefined, r.consumerGeneration, 1);
    } catch (err) {
      if (isFailureError(err)) this.settle(p, err.failure, 0, 1, err);
      else p.reject(err);
    }
  }

  private async claimMany(batch: readonly PendingClaim[]): Promise<void> {
    this.stats.claimManyCalls += 1;
    let results;
    try {
      // the call's span goes in the first claim's trace; every claim's own trace gets its outcome (settle)
      const first = batch[0] as PendingClaim;
      results = (
        await inContext(first.ctx, () =>
          this.transport.claimMany({ claims: batch.map((p) => p.request) }, { idempotent: batch.every((p) => p.request.replace) }),
        )
      ).results;
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
      else this.settle(p, r.failure, r.consumerGeneration, batch.length);
    });
    for (const p of again) await this.claimOne(p);
  }

  /** Answers one claim from its Failure (none: claimed). */
  private settle(p: PendingClaim, failure: Failure | undefined, consumerGeneration: number, batchSize: number, err?: unknown): void {
    const onSettled = this.options.onSettled;
    if (onSettled !== undefined) {
      inContext(p.ctx, () =>
        onSettled({
          request: p.request,
          outcome: failure === undefined ? 'claimed' : failure.code,
          call: batchSize > 1 ? `ClaimMany of ${batchSize}` : 'Claim',
        }),
      );
    }
    const outcome = claimOutcome(failure, consumerGeneration);
    if (outcome === undefined) {
      p.reject(err ?? new FailureError(failure as Failure));
      return;
    }
    if (outcome.kind === 'claimed') {
      this.stats.claimed += 1;
      p.onClaimed?.();
    } else if (outcome.kind === 'conflict') this.stats.conflict += 1;
    else if (outcome.kind === 'no_capacity') this.stats.noCapacity += 1;
    else this.stats.groupPolicy += 1;
    p.resolve(outcome);
  }
}
