import type { TailSpan } from './otlp-json';

// Attributes worth a glance, in display order; the rest stay in the span file.
const KEY_ATTRIBUTES = [
  'cellsched.instance_uuid',
  'cellsched.instance_uuids',
  'instance_uuid',
  'cellsched.request_id',
  'cellsched.cell',
  'rpc.grpc.status_code',
  'rpc.method',
  'messaging.rabbitmq.destination.routing_key',
  'messaging.rabbitmq.delivery_attempt',
  'http.request.method',
  'url.path',
  'http.route',
  'http.response.status_code',
  'db.namespace',
  'db.query.text',
];
const MAX_VALUE = 60;
// Event attributes explain a decision: shown in full up to this length.
const MAX_EVENT_VALUE = 200;
// Attributes that say why a decision went its way, shown on the span's line in full.
const DECISION_ATTRIBUTES = [
  'cellsched.scheduler.chosen',
  'cellsched.scheduler.alternates',
  'cellsched.scheduler.reason',
  'cellsched.scheduler.seed',
];
const MAX_DEPTH = 12;

function shortValue(v: string | number | boolean, max = MAX_VALUE): string {
  const s = String(v).replace(/\s+/g, ' ');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The attribute name without its `cellsched.<component>.` prefix, for event lines. */
function shortKey(k: string): string {
  return k.replace(/^cellsched\.(?:scheduler\.)?/, '');
}

/** `12.3 ms`, `1.20 s`. */
export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

/** One span's line: duration, status, service@host, kind, then the name indented by depth in the trace. */
export function formatSpan(span: TailSpan, depth: number): string {
  const attrs = [
    ...KEY_ATTRIBUTES.filter((k) => span.attributes[k] !== undefined).map((k) => `${k}=${shortValue(span.attributes[k] as string)}`),
    ...DECISION_ATTRIBUTES.filter((k) => span.attributes[k] !== undefined && span.attributes[k] !== '').map(
      (k) => `${shortKey(k)}=${shortValue(span.attributes[k] as string, MAX_EVENT_VALUE)}`,
    ),
  ];
  const status = span.status === 'ERROR' && span.statusMessage ? `ERROR(${shortValue(span.statusMessage)})` : span.status;
  const indent = '  '.repeat(Math.min(depth, MAX_DEPTH));
  const who = `${span.service}@${span.host}`;
  return [
    '',
    formatDuration(span.durationMs).padStart(10),
    status.padEnd(5),
    who.padEnd(28),
    span.kind.padEnd(8),
    `${indent}${span.name}`,
    ...attrs,
  ].join('  ');
}

/** One line per event of the span, under it: `· name key=value ...`. */
export function formatEvents(span: TailSpan, depth: number): string[] {
  const pad = ' '.repeat(10 + 2 + 5 + 2 + 28 + 2 + 8 + 2) + '  '.repeat(Math.min(depth, MAX_DEPTH) + 1);
  return (span.events ?? []).map((e) => {
    const attrs = Object.entries(e.attributes).map(([k, v]) => `${shortKey(k)}=${shortValue(v, MAX_EVENT_VALUE)}`);
    return [`${pad}· ${e.name}`, ...attrs].join('  ');
  });
}

/** Whether the span mentions `text` in its name or an attribute value. */
export function spanMentions(span: TailSpan, text: string): boolean {
  return span.name.includes(text) || Object.values(span.attributes).some((v) => String(v).includes(text));
}

/** Whether any span of the trace mentions `text` in its name or an attribute value (a server uuid, a host, a request id). */
export function traceMentions(spans: readonly TailSpan[], text: string): boolean {
  return spans.some((s) => spanMentions(s, text));
}

/** Spans in tree order (parents before children, siblings by start time) with their depth. */
export function treeOrder(spans: readonly TailSpan[]): Array<{ span: TailSpan; depth: number }> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, TailSpan[]>();
  for (const s of spans) {
    const key = ids.has(s.parentSpanId) ? s.parentSpanId : '';
    children.set(key, [...(children.get(key) ?? []), s]);
  }
  const byStart = (a: TailSpan, b: TailSpan) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0);
  const out: Array<{ span: TailSpan; depth: number }> = [];
  const visit = (parent: string, depth: number) => {
    for (const s of [...(children.get(parent) ?? [])].sort(byStart)) {
      out.push({ span: s, depth });
      if (s.spanId !== parent) visit(s.spanId, depth + 1);
    }
  };
  visit('', 0);
  return out;
}

/** A header line for the trace, then one line per span as a tree. */
export function formatTrace(traceId: string, spans: readonly TailSpan[]): string[] {
  const services = new Set(spans.map((s) => s.service));
  const errors = spans.filter((s) => s.status === 'ERROR').length;
  const start = spans.reduce((m, s) => (s.startNs < m ? s.startNs : m), spans[0]?.startNs ?? 0n);
  const end = spans.reduce((m, s) => Math.max(m, Number(s.startNs - start) / 1e6 + s.durationMs), 0);
  const header = `trace ${traceId}  ${spans.length} span(s)  ${services.size} service(s)  ${formatDuration(end)}${errors ? `  ${errors} ERROR` : ''}`;
  return [header, ...treeOrder(spans).flatMap(({ span, depth }) => [formatSpan(span, depth), ...formatEvents(span, depth)])];
}
