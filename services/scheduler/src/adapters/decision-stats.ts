import type { Logger } from 'pino';
import type { DecisionObserver } from './grpc/scheduler-service';

type Outcome = Parameters<DecisionObserver>[0]['outcome'];

/** Counts since the replica started, as logged: decisions by outcome and claim conflict retries. */
export interface DecisionTotals {
  selected: number;
  no_valid_host: number;
  invalid: number;
  error: number;
  claim_retries: number;
}

/**
 * The replica's decisions, summed and logged every `intervalMs` while there were any ("scheduler
 * decisions": the interval's count, p50/p99 ms and claim conflict retries, plus the totals since
 * start, so a reader can difference two lines). An operator's view of how busy and how contended
 * the scheduler is without tracing; `pnpm bench e2e` reads the totals.
 */
export class DecisionStats {
  readonly totals: DecisionTotals = { selected: 0, no_valid_host: 0, invalid: 0, error: 0, claim_retries: 0 };
  private window: number[] = [];
  private retries = 0;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    intervalMs: number,
  ) {
    this.timer = intervalMs > 0 ? setInterval(() => this.flush(), intervalMs) : undefined;
    this.timer?.unref();
  }

  readonly observe: DecisionObserver = (d) => {
    this.totals[d.outcome satisfies Outcome] += 1;
    this.totals.claim_retries += d.claimRetries;
    this.retries += d.claimRetries;
    this.window.push(d.ms);
  };

  /** Logs the interval's summary (nothing when there was no decision). */
  flush(): void {
    if (this.window.length === 0) return;
    const ms = this.window.sort((a, b) => a - b);
    const at = (q: number): number => Math.round((ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0) * 10) / 10;
    this.log.info(
      { decisions: ms.length, p50_ms: at(0.5), p99_ms: at(0.99), claim_retries: this.retries, totals: { ...this.totals } },
      'scheduler decisions',
    );
    this.window = [];
    this.retries = 0;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.flush();
  }
}
