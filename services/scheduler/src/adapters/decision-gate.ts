/**
 * Admission control of one replica: at most `limit` decisions run at once; the others wait in
 * arrival order (Nova and Nomad both run a fixed number of scheduler workers). Why: a burst
 * (the race test's 2,000 concurrent requests, 500 per replica) otherwise sends every claim to
 * placement at once; they queue for placement's database connections past the placement call's
 * deadline and fail, although each would take milliseconds. Waiting here costs the caller only
 * time within its own deadline.
 */
export class DecisionGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Highest number of decisions seen running at once, and how many had to wait (observability, tests). */
  readonly stats = { maxRunning: 0, queued: 0 };

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`DecisionGate: limit must be an integer >= 1, got ${limit}`);
  }

  /** Runs `work` once a slot is free; its result or error is passed through and the slot freed either way. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      this.stats.queued += 1;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    this.stats.maxRunning = Math.max(this.stats.maxRunning, this.running);
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // NOTE: the slot passes straight to the next waiter (running stays the same), so a newcomer cannot overtake it.
      if (next === undefined) this.running -= 1;
      else next();
    }
  }
}
