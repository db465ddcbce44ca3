import { context, trace, type AttributeValue, type Context } from '@opentelemetry/api';

/** Attribute values a span takes: undefined entries are skipped. */
export type SpanFields = Record<string, AttributeValue | undefined>;

function defined(fields: SpanFields): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

/** Whether a span is active and recording: explanations worth building only for a trace. */
export function spanRecording(): boolean {
  return trace.getActiveSpan()?.isRecording() ?? false;
}

/** Sets attributes on the active span (a no-op when tracing is off or no span is active). */
export function annotateSpan(fields: SpanFields): void {
  trace.getActiveSpan()?.setAttributes(defined(fields));
}

/**
 * Adds a named event to the active span: a step of a decision worth reading in a trace
 * (trace-tail prints events under their span). A no-op without an active span.
 */
export function spanEvent(name: string, fields: SpanFields = {}): void {
  trace.getActiveSpan()?.addEvent(name, defined(fields));
}

/** The trace context work was asked for in, to run it later in that context (queues, batches). */
export type SavedContext = Context;

/** The active context now (the caller's trace and span). */
export function savedContext(): SavedContext {
  return context.active();
}

/** Runs `fn` in a saved context: its spans and events join that trace, not whichever is active. */
export function inContext<T>(ctx: SavedContext, fn: () => T): T {
  return context.with(ctx, fn);
}
