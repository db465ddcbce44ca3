import { traceMentions } from './format';
import type { FoundTrace } from './found-trace';
import type { TailSpan } from './otlp-json';

/**
 * The collector's memory of the latest spans, by trace, for its query endpoint: at most
 * `maxSpans` spans; beyond that the traces first seen longest ago are forgotten whole.
 */
export class RecentTraces {
  private readonly traces = new Map<string, TailSpan[]>();
  private count = 0;

  constructor(private readonly maxSpans: number) {}

  add(spans: readonly TailSpan[]): void {
    for (const span of spans) {
      const list = this.traces.get(span.traceId);
      if (list) list.push(span);
      else this.traces.set(span.traceId, [span]);
      this.count++;
    }
    for (const [traceId, list] of this.traces) {
      if (this.count <= this.maxSpans) break;
      this.traces.delete(traceId);
      this.count -= list.length;
    }
  }

  /** The last `limit` traces (by first sight) that mention `text` (all traces without it). */
  find(text: string | undefined, limit: number): FoundTrace[] {
    const out: FoundTrace[] = [];
    for (const [traceId, spans] of this.traces) {
      if (text === undefined || traceMentions(spans, text)) out.push({ traceId, spans: [...spans] });
    }
    return out.slice(-limit);
  }

  get spanCount(): number {
    return this.count;
  }
}
