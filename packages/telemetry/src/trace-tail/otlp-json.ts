/** One span as trace-tail shows it, flattened out of an OTLP JSON export request. */
export interface TailSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: string;
  service: string;
  host: string;
  startNs: bigint;
  durationMs: number;
  status: 'UNSET' | 'OK' | 'ERROR';
  statusMessage: string;
  attributes: Record<string, string | number | boolean>;
  /** The span's events (a decision's steps, an exception), in time order. */
  events?: TailEvent[];
}

/** One span event: its name and attributes. */
export interface TailEvent {
  name: string;
  attributes: Record<string, string | number | boolean>;
}

type Json = Record<string, unknown>;

// NOTE: OTLP JSON `kind` is the API SpanKind + 1 (0 is UNSPECIFIED).
const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUSES = ['UNSET', 'OK', 'ERROR'] as const;

function asObject(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** An OTLP AnyValue as a plain value (arrays and maps as JSON text). */
function anyValue(v: unknown): string | number | boolean {
  const o = asObject(v);
  if (typeof o['stringValue'] === 'string') return o['stringValue'];
  if (typeof o['boolValue'] === 'boolean') return o['boolValue'];
  if (typeof o['doubleValue'] === 'number') return o['doubleValue'];
  if (o['intValue'] !== undefined) return Number(o['intValue']);
  return JSON.stringify(o['arrayValue'] ?? o['kvlistValue'] ?? '');
}

/** OTLP key/value list → record. */
export function attributesOf(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const item of asArray(list)) {
    const kv = asObject(item);
    if (typeof kv['key'] === 'string') out[kv['key']] = anyValue(kv['value']);
  }
  return out;
}

function nanos(v: unknown): bigint {
  try {
    return typeof v === 'string' || typeof v === 'number' ? BigInt(v) : 0n;
  } catch {
    return 0n;
  }
}

function spanOf(raw: unknown, service: string, host: string): TailSpan | undefined {
  const s = asObject(raw);
  if (typeof s['traceId'] !== 'string' || typeof s['spanId'] !== 'string') return undefined;
  const start = nanos(s['startTimeUnixNano']);
  const status = asObject(s['status']);
  return {
    traceId: s['traceId'],
    spanId: s['spanId'],
    parentSpanId: typeof s['parentSpanId'] === 'string' ? s['parentSpanId'] : '',
    name: typeof s['name'] === 'string' ? s['name'] : '?',
    kind: KINDS[Number(s['kind'] ?? 0)] ?? 'unspecified',
    service,
    host,
    startNs: start,
    durationMs: Number(nanos(s['endTimeUnixNano']) - start) / 1e6,
    status: STATUSES[Number(status['code'] ?? 0)] ?? 'UNSET',
    statusMessage: typeof status['message'] === 'string' ? status['message'] : '',
    attributes: attributesOf(s['attributes']),
    events: asArray(s['events']).map((e) => {
      const ev = asObject(e);
      return { name: typeof ev['name'] === 'string' ? ev['name'] : '?', attributes: attributesOf(ev['attributes']) };
    }),
  };
}

/**
 * The spans of one OTLP `ExportTraceServiceRequest` in JSON (a POST body or one line of a
 * JSON-lines file). Anything malformed is skipped, never thrown.
 */
export function spansFromRequest(body: unknown): TailSpan[] {
  const out: TailSpan[] = [];
  for (const rs of asArray(asObject(body)['resourceSpans'])) {
    const resource = attributesOf(asObject(asObject(rs)['resource'])['attributes']);
    const service = String(resource['service.name'] ?? '?');
    const host = String(resource['host.name'] ?? '?');
    for (const ss of asArray(asObject(rs)['scopeSpans'])) {
      for (const raw of asArray(asObject(ss)['spans'])) {
        const span = spanOf(raw, service, host);
        if (span) out.push(span);
      }
    }
  }
  return out;
}
