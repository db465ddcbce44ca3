import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Level, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options of {@link createLogger}; services pass their config values here. */
export interface LoggerOptions {
  /** The service name, e.g. `scheduler` (field `service`). */
  service: string;
  /** The host this process runs as (field `host`). */
  host: string;
  /** The cell, for cell-level services (field `cell`). */
  cell?: string;
  /** Default `info`. `silent` logs nothing. */
  level?: Level | 'silent';
  /** Human-readable output through pino-pretty (development only). */
  pretty?: boolean;
  /** Where lines go; default stdout. A path is appended to (created if missing). */
  destination?: string | DestinationStream;
}

/** Request-scoped fields, in the names the logs use. */
export interface RequestLogFields {
  requestId?: string;
  instanceUuid?: string;
  rpcMethod?: string;
  attempt?: number;
}

/** `trace_id`, `span_id` and `trace_flags` of the active span, added to every line. */
export function traceFields(): Record<string, string> {
  const ctx = trace.getActiveSpan()?.spanContext();
  if (!ctx || !isSpanContextValid(ctx)) return {};
  return { trace_id: ctx.traceId, span_id: ctx.spanId, trace_flags: `0${ctx.traceFlags.toString(16)}` };
}

function destinationFor(options: LoggerOptions): DestinationStream | undefined {
  if (options.pretty) return pino.transport({ target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } }) as DestinationStream;
  if (typeof options.destination === 'string') return pino.destination({ dest: options.destination, mkdir: true, sync: true });
  return options.destination;
}

/**
 * The process logger: JSON lines with `service`, `host`, `cell` on every line, the active
 * span's `trace_id`/`span_id` (read at each call, so it works whether or not the pino
 * instrumentation patched this module), ISO timestamps, string levels, and errors under
 * `err` with their stack. Create one per process and pass it down; use
 * {@link requestLogger} for request-scoped children.
 */
export function createLogger(options: LoggerOptions): Logger {
  const base: Record<string, string | number> = { service: options.service, host: options.host, pid: process.pid };
  if (options.cell) base['cell'] = options.cell;
  const settings: pino.LoggerOptions = {
    level: options.level ?? 'info',
    base,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    mixin: traceFields,
  };
  const destination = destinationFor(options);
  return destination ? pino(settings, destination) : pino(settings);
}

/**
 * A child logger with the request-scoped fields `request_id`, `instance_uuid`, `rpc_method`
 * and `attempt` (only those given). Cheap: call it per request or per attempt.
 */
export function requestLogger(logger: Logger, fields: RequestLogFields): Logger {
  const bindings: Record<string, string | number> = {};
  if (fields.requestId !== undefined) bindings['request_id'] = fields.requestId;
  if (fields.instanceUuid !== undefined) bindings['instance_uuid'] = fields.instanceUuid;
  if (fields.rpcMethod !== undefined) bindings['rpc_method'] = fields.rpcMethod;
  if (fields.attempt !== undefined) bindings['attempt'] = fields.attempt;
  return logger.child(bindings);
}
