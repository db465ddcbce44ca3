import type { CastContext, CastHandler } from '@cellsched/bus';
import { isConnectionError } from '@cellsched/db';
import { isFailureError } from '@cellsched/grpc';

/** How long one delivery keeps retrying a handler whose dependency is down, and the pauses between tries. */
export interface TransientRetryOptions {
  /** Total time one delivery may spend retrying before it gives the failure to the bus (redelivered, dead-lettered after the limit). */
  readonly budgetMs: number;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  /** For tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/**
 * A failure another try may fix: a retryable Failure (placement or the compute bus
 * unavailable: `grpc.unavailable`, `grpc.dependency_unavailable`, ...) or a lost PostgreSQL
 * connection. Anything else (a bug, a bad message) is not retried here.
 */
export function isTransient(err: unknown): boolean {
  if (isFailureError(err)) return err.failure.retryable;
  if ((err as { retryable?: unknown } | null)?.retryable === true) return true; // BusError: broker unavailable, publish unconfirmed
  return isConnectionError(err);
}

/**
 * Runs `fn` again with backoff (250 ms doubling to `maxDelayMs`) while it fails with an error
 * `retryable` accepts (default {@link isTransient}), for up to `budgetMs`; then the last error
 * is thrown. Anything else is thrown at once. `fn` must be safe to rerun.
 */
export async function retryWhileTransient<T>(
  fn: () => Promise<T>,
  o: TransientRetryOptions & {
    readonly retryable?: (err: unknown) => boolean;
    readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  },
): Promise<T> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = o.now ?? Date.now;
  const until = now() + o.budgetMs;
  let delay = o.initialDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(o.retryable ?? isTransient)(err) || now() + delay > until) throw err;
      o.onRetry?.(err, attempt, delay);
      await sleep(delay);
      delay = Math.min(o.maxDelayMs ?? 5000, delay * 2);
    }
  }
}

/**
 * Wraps an idempotent cast handler so that one delivery rides out a dependency outage
 * (placement or a scheduler restarting, PostgreSQL restarting, a bus reconnecting) by rerunning
 * the whole handler with backoff for up to `budgetMs`, instead of burning the bus's bounded
 * redeliveries in seconds: ten deliveries took ~20 s, shorter than a placement restart under
 * load; a dead-lettered `build_instances` left its instance in BUILD until the watchdog, and
 * dead-lettered `delete_instance` casts waited minutes for the API's sweeper. Safe only for a
 * handler that is redelivery-safe (idempotent) and holds no transaction or row lock across the
 * pause (each of the conductors' handlers runs its decision in one transaction, rolled back
 * before the pause). Logs each retry at `warn` on the cast's logger.
 */
export function retryTransient<Req>(handler: CastHandler<Req>, o: TransientRetryOptions): CastHandler<Req> {
  return (req: Req, ctx: CastContext): Promise<void> =>
    retryWhileTransient(() => handler(req, ctx), {
      ...o,
      onRetry: (err, attempt, delay) =>
        ctx.logger.warn(
          { err: String(err), try: attempt, delay_ms: delay },
          'cast handler hit an unavailable dependency, retrying in-delivery',
        ),
    });
}
