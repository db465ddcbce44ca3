/**
 * The two bounded budgets of the story sampler: a token bucket for the traces kept outside
 * the story (so many per minute), and a per-trace count of database spans. Time is passed
 * in, so both are pure and testable.
 */

/** At most `perMinute` takes per minute on average, with bursts up to `perMinute`. 0 never grants. */
export class TokenBucket {
  private tokens: number;
  private last: number | undefined;

  constructor(private readonly perMinute: number) {
    this.tokens = perMinute;
  }

  /** Takes one token if there is one at time `nowMs`. */
  take(nowMs: number): boolean {
    if (this.perMinute <= 0) return false;
    if (this.last !== undefined) this.tokens = Math.min(this.perMinute, this.tokens + ((nowMs - this.last) * this.perMinute) / 60_000);
    this.last = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * Counts takes per trace id and grants at most `cap` per trace. Remembers the `maxTraces`
 * most recently started traces (a trace forgotten starts again from zero: the cap bounds a
 * trace's spans in the common case, the memory always).
 */
export class PerTraceCap {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly cap: number,
    private readonly maxTraces = 4096,
  ) {}

  /** Takes one of `traceId`'s allowance if some is left. */
  take(traceId: string): boolean {
    if (this.cap <= 0) return false;
    const used = this.counts.get(traceId) ?? 0;
    if (used >= this.cap) return false;
    if (used === 0 && this.counts.size >= this.maxTraces) {
      const oldest = this.counts.keys().next().value;
      if (oldest !== undefined) this.counts.delete(oldest);
    }
    this.counts.set(traceId, used + 1);
    return true;
  }

  /** How many traces are remembered (for tests). */
  get size(): number {
    return this.counts.size;
  }
}
