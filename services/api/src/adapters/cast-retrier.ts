import type { Logger } from '@cellsched/telemetry';

/**
 * Retries, in this process, casts that were not confirmed after their rows were committed
 * (the broker was unreachable for longer than the request could wait). Each retry is safe:
 * the super-conductor treats a repeated cast like a redelivery. A crash of this process
 * loses the in-memory queue, never the request: the build request sweeper re-casts anything
 * still without a cell after its age threshold.
 */
export class CastRetrier {
  private readonly pending = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly log: Logger,
    private readonly backoffMs: readonly number[] = [500, 1000, 2000, 5000, 10_000, 30_000],
  ) {}

  /** Keeps trying `send` with backoff until it resolves or the retrier is closed. Never throws. */
  retry(what: Record<string, unknown>, send: () => Promise<unknown>): void {
    const run = (async () => {
      for (let attempt = 0; !this.closed; attempt++) {
        await new Promise((r) => {
          setTimeout(r, this.backoffMs[Math.min(attempt, this.backoffMs.length - 1)]).unref();
        });
        if (this.closed) return;
        try {
          await send();
          this.log.info({ ...what, attempt: attempt + 2 }, 'cast retried');
          return;
        } catch (err) {
          this.log.warn({ ...what, err, attempt: attempt + 2 }, 'cast retry failed');
        }
      }
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
  }

  /** Number of casts still being retried. */
  get size(): number {
    return this.pending.size;
  }

  /** Stops retrying (the sweeper will pick up what is left). */
  close(): void {
    this.closed = true;
  }
}
