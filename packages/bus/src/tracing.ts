import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

/** Tracer scope name of this package. Without a started SDK every call here is a no-op. */
const tracer = trace.getTracer('@cellsched/bus');

type Headers = Record<string, unknown>;

const setter: TextMapSetter<Headers> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

const getter: TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    if (typeof value === 'string') return value;
    return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
  },
};

/** Attributes of the OpenTelemetry messaging semantic conventions for RabbitMQ. */
export interface MessagingAttributes {
  readonly exchange: string;
  readonly routingKey: string;
  readonly messageId: string;
  readonly bodySize: number;
  readonly method: string;
}

function attributes(kind: 'send' | 'process', attrs: MessagingAttributes): Record<string, string | number> {
  return {
    'messaging.system': 'rabbitmq',
    'messaging.operation.type': kind,
    'messaging.operation.name': kind,
    'messaging.destination.name': attrs.exchange,
    'messaging.rabbitmq.destination.routing_key': attrs.routingKey,
    'messaging.message.id': attrs.messageId,
    'messaging.message.body.size': attrs.bodySize,
    'rpc.method': attrs.method,
  };
}

/**
 * Starts the producer span `send <topic>` as a child of the active context and writes the
 * W3C trace context (traceparent/tracestate) of that span into `headers`.
 */
export function startSendSpan(topic: string, attrs: MessagingAttributes, headers: Headers): Span {
  const span = tracer.startSpan(`send ${topic}`, { kind: SpanKind.PRODUCER, attributes: attributes('send', attrs) });
  propagation.inject(trace.setSpan(context.active(), span), headers, setter);
  return span;
}

/**
 * Runs `fn` inside the consumer span `process <topic>`, whose parent is the trace context
 * found in the message headers (none: a new trace). Ends the span with the outcome.
 */
export async function withProcessSpan<T>(
  topic: string,
  attrs: MessagingAttributes & { attempt: number },
  headers: Headers,
  fn: (ctx: Context) => Promise<T>,
): Promise<T> {
  const parent = propagation.extract(ROOT_CONTEXT, headers, getter);
  const span = tracer.startSpan(
    `process ${topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { ...attributes('process', attrs), 'messaging.rabbitmq.delivery_attempt': attrs.attempt },
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  try {
    return await context.with(active, () => fn(active));
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The W3C `traceparent` of the active span (undefined when tracing is off), to save with work
 * that something will pick up later without a message (a row a watchdog reads), so that work
 * can stay in this trace: see {@link withSavedTrace}.
 */
export function activeTraceParent(): string | undefined {
  const carrier: Headers = {};
  propagation.inject(context.active(), carrier, setter);
  return typeof carrier.traceparent === 'string' ? carrier.traceparent : undefined;
}

/**
 * Runs `fn` inside a new span `name` whose parent is a saved W3C `traceparent` (from
 * {@link activeTraceParent}), so work resumed without a message — a watchdog's retry — is part
 * of the trace that started it, and the casts it sends too. None, or a malformed one: a new trace.
 */
export async function withSavedTrace<T>(name: string, traceparent: string | null | undefined, fn: () => Promise<T>): Promise<T> {
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }, getter) : ROOT_CONTEXT;
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), fn);
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Records a failure on a span (the caller ends it). */
export function markFailed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** trace_id / span_id of a context, for log lines (empty when tracing is off). */
export function traceFields(ctx: Context): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getSpanContext(ctx);
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
