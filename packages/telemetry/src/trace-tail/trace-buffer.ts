import type { TailSpan } from './otlp-json';

/**
 * Collects spans by trace and releases a trace once no span of it arrived for `quietMs`
 * (spans are exported as they end, children first, so a trace is printed whole). A span
 * that arrives after its trace was released starts a new group for the same trace id.
 */
export class TraceBuffer {
  private readonly traces = new Map<string, { spans: TailSpan[]; lastSeen: number }>();

  constructor(private readonly quietMs: number) {}

  add(spans: readonly TailSpan[], now: number): void {
    for (const span of spans) {
      const entry = this.traces.get(span.traceId) ?? { spans: [], lastSeen: now };
      entry.spans.push(span);
      entry.lastSeen = now;
      this.traces.set(span.traceId, entry);
    }
  }

  /** Traces quiet since `now - quietMs` (all of them with `all`), oldest first; removed from the buffer. */
  release(now: number, all = false): Array<{ traceId: string; spans: TailSpan[] }> {
    const out: Array<{ traceId: string; spans: TailSpan[] }> = [];
    for (const [traceId, entry] of this.traces) {
      if (all || now - entry.lastSeen >= this.quietMs) {
        out.push({ traceId, spans: entry.spans });
        this.traces.delete(traceId);
      }
    }
    return out;
  }

  get size(): number {
    return this.traces.size;
  }
}
