import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NoopSpanProcessor,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { DEFAULT_FILE_FLUSH_MS, JsonlFileSpanExporter } from './jsonl-span-exporter';
import { DEFAULT_ROTATION, type RotationOptions } from './rotating-file';
import { DEFAULT_SAMPLING, type SamplingOptions, samplingProblems } from './sampling/sampling-policy';
import { StorySampler } from './sampling/story-sampler';

/** Where spans go. */
export type TelemetryExporter = 'otlp' | 'file' | 'console' | 'none';

/** Options of {@link startTelemetry}; services pass their config values here. */
export interface TelemetryOptions {
  /** OTel `service.name`, e.g. `scheduler`. */
  serviceName: string;
  /** OTel `host.name`: the host this process runs as. */
  host: string;
  /** `cellsched.cell` resource attribute; omit for API-level services. */
  cell?: string;
  exporter: TelemetryExporter;
  /** JSON-lines file, required when `exporter` is `file`. */
  file?: string;
  /** OTLP/HTTP base URL (e.g. `http://127.0.0.1:4318`) for `otlp`; default: the standard OTEL_* env or localhost. */
  endpoint?: string;
  /**
   * Also load the amqplib instrumentation. Default false: `@cellsched/bus` makes its own
   * `send <topic>` / `process <topic>` spans and carries their context in the message
   * headers; the instrumentation would add a second pair of spans and overwrite that
   * `traceparent`, so consumer spans would hang under its publish span instead.
   */
  instrumentAmqplib?: boolean;
  /**
   * Which spans are recorded ({@link SamplingOptions}). Default: every trace of a server's
   * story (create, action, delete) whole, no other trace, no database span.
   */
  sampling?: SamplingOptions;
  /** Size-based rotation of the span file (exporter `file`). Default: 4 files of 64 MB. */
  rotation?: RotationOptions;
  /**
   * How long an ended span may wait in the process to be written with the next ones (exporter
   * `file`, ms; 0: each span as it ends). Default {@link DEFAULT_FILE_FLUSH_MS}.
   */
  fileFlushMs?: number;
  /** Flush on SIGTERM/SIGINT (see {@link startTelemetry}). Default true. */
  handleSignals?: boolean;
}

const EXPORTERS: readonly TelemetryExporter[] = ['otlp', 'file', 'console', 'none'];
const SHUTDOWN_TIMEOUT_MS = 5000;

let sdk: NodeSDK | undefined;
let processor: SpanProcessor | undefined;
let stopping: Promise<void> | undefined;

/** Every problem with `options`, empty when they are valid. */
export function validateTelemetryOptions(options: TelemetryOptions): string[] {
  const errors: string[] = [];
  if (!options.serviceName) errors.push('serviceName is required');
  if (!options.host) errors.push('host is required');
  if (!EXPORTERS.includes(options.exporter))
    errors.push(`exporter must be one of ${EXPORTERS.join(', ')}, got '${String(options.exporter)}'`);
  if (options.exporter === 'file' && !options.file) errors.push("file is required when exporter is 'file'");
  if (options.endpoint !== undefined && !/^https?:\/\/[^/]+/.test(options.endpoint))
    errors.push(`endpoint must be an http(s) URL, got '${options.endpoint}'`);
  if (options.sampling) errors.push(...samplingProblems(options.sampling));
  if (options.rotation && !(options.rotation.maxBytes >= 0)) errors.push('rotation.maxBytes must be >= 0');
  if (options.rotation && !(options.rotation.keep >= 1)) errors.push('rotation.keep must be >= 1');
  if (options.fileFlushMs !== undefined && !(Number.isSafeInteger(options.fileFlushMs) && options.fileFlushMs >= 0))
    errors.push('fileFlushMs must be an integer >= 0');
  return errors;
}

function spanProcessorFor(options: TelemetryOptions): SpanProcessor {
  switch (options.exporter) {
    case 'console':
      return new SimpleSpanProcessor(new ConsoleSpanExporter());
    case 'file':
      return new SimpleSpanProcessor(
        new JsonlFileSpanExporter(options.file ?? '', options.rotation ?? DEFAULT_ROTATION, options.fileFlushMs ?? DEFAULT_FILE_FLUSH_MS),
      );
    case 'otlp': {
      const url = options.endpoint ? `${options.endpoint.replace(/\/+$/, '')}/v1/traces` : undefined;
      return new BatchSpanProcessor(new OTLPTraceExporter(url ? { url } : {}));
    }
    default:
      // NOTE: never an empty list: NodeSDK then registers no tracer provider, trace ids are
      // all zero and no context propagates (TOOLCHAIN gotcha 7).
      return new NoopSpanProcessor();
  }
}

function instrumentations(options: TelemetryOptions) {
  const dbSpans = (options.sampling ?? DEFAULT_SAMPLING).dbSpansPerTrace > 0;
  return [
    new HttpInstrumentation(),
    // NOTE: health probes would drown the real traces.
    new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
    new PinoInstrumentation({ disableLogSending: true }),
    // NOTE: no database span is wanted by default (the sampler would drop each): then pg is not even patched.
    ...(dbSpans ? [new PgInstrumentation({ requireParentSpan: true })] : []),
    ...(options.instrumentAmqplib ? [new AmqplibInstrumentation()] : []),
  ];
}

function onSignal(signal: NodeJS.Signals): void {
  const flush = processor ? Promise.race([processor.forceFlush(), delay(SHUTDOWN_TIMEOUT_MS)]) : Promise.resolve();
  void flush
    .catch(() => undefined)
    .finally(() => {
      // NOTE: if the service handles the signal itself it owns the exit (and calls
      // shutdownTelemetry() last); otherwise behave like the default: stop and re-raise.
      if (process.listenerCount(signal) > 0) return;
      void shutdownTelemetry().finally(() => process.kill(process.pid, signal));
    });
}

function resourceAttributes(options: TelemetryOptions): Record<string, string | number> {
  const attributes: Record<string, string | number> = {
    'service.name': options.serviceName,
    'service.instance.id': `${options.host}/${process.pid}`,
    'host.name': options.host,
    'process.pid': process.pid,
    'process.runtime.name': 'nodejs',
    'process.runtime.version': process.versions.node,
  };
  if (options.cell) attributes['cellsched.cell'] = options.cell;
  return attributes;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Starts the OpenTelemetry SDK for this process: resource attributes `service.name`,
 * `host.name`, `cellsched.cell`; HTTP, gRPC, pg and pino instrumentations (W3C trace context
 * in gRPC metadata; the bus carries it in AMQP headers itself); the {@link StorySampler}
 * (a server's story whole, the rest bounded); the chosen span exporter. Logs and
 * metrics exporters stay off. Load it before anything else (`node --require ./dist/tracing.js`)
 * so the instrumented modules are patched when first required.
 *
 * On SIGTERM/SIGINT it flushes spans; when no other listener handles the signal it also
 * shuts down and re-raises it. A service that handles the signal must call
 * {@link shutdownTelemetry} last. Throws on invalid options (listing every problem) or when
 * telemetry is already started in this process.
 */
export function startTelemetry(options: TelemetryOptions): void {
  const errors = validateTelemetryOptions(options);
  if (errors.length > 0) throw new Error(`invalid telemetry options: ${errors.join('; ')}`);
  if (sdk) throw new Error('telemetry is already started in this process');
  processor = spanProcessorFor(options);
  sdk = new NodeSDK({
    serviceName: options.serviceName,
    resource: resourceFromAttributes(resourceAttributes(options)),
    // NOTE: no host detector (`host.name` is ours: a simulated host, not the machine) and no
    // process detector (it exports the command line, which may hold credentials).
    resourceDetectors: [envDetector],
    spanProcessors: [processor],
    sampler: new StorySampler(options.sampling ?? DEFAULT_SAMPLING),
    instrumentations: instrumentations(options),
    // NOTE: empty lists, not the env defaults: otherwise NodeSDK sends logs and metrics over
    // OTLP to localhost and every exit stalls in retries (TOOLCHAIN gotcha 8).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  if (options.handleSignals ?? true) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
}

/** Flushes pending spans and stops the SDK (at most 5 s). Idempotent; a no-op if never started. */
export function shutdownTelemetry(): Promise<void> {
  if (!sdk) return Promise.resolve();
  const current = sdk;
  stopping ??= Promise.race([current.shutdown(), delay(SHUTDOWN_TIMEOUT_MS)]).catch(() => undefined);
  return stopping;
}
