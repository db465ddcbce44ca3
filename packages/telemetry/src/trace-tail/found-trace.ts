import type { TailSpan } from './otlp-json';

/** One trace's spans, as trace-tail prints it and the collector's query endpoint returns it. */
export interface FoundTrace {
  traceId: string;
  spans: TailSpan[];
}

type SpanJson = Omit<TailSpan, 'startNs'> & { startNs: string };

/** The query endpoint's body: spans as they are, with the start time (a bigint) as a decimal string. */
export function tracesToJson(traces: readonly FoundTrace[]): { traces: Array<{ traceId: string; spans: SpanJson[] }> } {
  return { traces: traces.map((t) => ({ traceId: t.traceId, spans: t.spans.map((s) => ({ ...s, startNs: s.startNs.toString() })) })) };
}

function spanFromJson(raw: unknown): TailSpan | undefined {
  const s = raw as Partial<SpanJson> | null;
  if (!s || typeof s.traceId !== 'string' || typeof s.spanId !== 'string' || typeof s.name !== 'string') return undefined;
  let startNs = 0n;
  try {
    startNs = BigInt(s.startNs ?? 0);
  } catch {
    /* a malformed time sorts first */
  }
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId ?? '',
    name: s.name,
    kind: s.kind ?? 'unspecified',
    service: s.service ?? '?',
    host: s.host ?? '?',
    startNs,
    durationMs: Number(s.durationMs ?? 0),
    status: s.status ?? 'UNSET',
    statusMessage: s.statusMessage ?? '',
    attributes: s.attributes ?? {},
    events: s.events ?? [],
  };
}

/** The traces of a query endpoint's body; anything malformed is skipped. */
export function tracesFromJson(body: unknown): FoundTrace[] {
  const list = (body as { traces?: unknown } | null)?.traces;
  if (!Array.isArray(list)) return [];
  return list.flatMap((t: { traceId?: unknown; spans?: unknown }) => {
    if (typeof t?.traceId !== 'string' || !Array.isArray(t.spans)) return [];
    return [{ traceId: t.traceId, spans: t.spans.map(spanFromJson).filter((s): s is TailSpan => s !== undefined) }];
  });
}

/** Traces in the order they started (by their earliest span). */
export function byStart(traces: FoundTrace[]): FoundTrace[] {
  const start = (t: FoundTrace) => t.spans.reduce((m, s) => (s.startNs < m ? s.startNs : m), t.spans[0]?.startNs ?? 0n);
  return [...traces].sort((a, b) => (start(a) < start(b) ? -1 : start(a) > start(b) ? 1 : 0));
}
