import { type Config, defineConfig } from '@cellsched/config';
import type { LoggerOptions } from './logger';
import { DEFAULT_FILE_FLUSH_MS } from './jsonl-span-exporter';
import { DEFAULT_ROTATION } from './rotating-file';
import { DEFAULT_SAMPLING, DEFAULT_STORY_REQUESTS } from './sampling/sampling-policy';
import type { TelemetryOptions } from './start-telemetry';

const MB = 1024 * 1024;

/**
 * The telemetry and logging options every service declares: spread it into the service's
 * own schema (`defineConfig({ ...telemetryConfigSchema, port: ... })`) so all processes
 * take the same variables.
 */
export const telemetryConfigSchema = defineConfig({
  telemetryExporter: {
    type: 'enum',
    env: 'CELLSCHED_TELEMETRY_EXPORTER',
    values: ['none', 'otlp', 'file', 'console'],
    default: 'none',
    help: 'Where OpenTelemetry spans go: none, otlp (to telemetryEndpoint), file (OTLP JSON lines) or console.',
  },
  telemetryEndpoint: {
    type: 'url',
    env: 'CELLSCHED_TELEMETRY_ENDPOINT',
    protocols: ['http:', 'https:'],
    help: 'OTLP/HTTP base URL for the otlp exporter, e.g. http://127.0.0.1:4318 (trace-tail or Jaeger). Default: the OTEL_* variables, else localhost.',
  },
  telemetryFile: { type: 'string', env: 'CELLSCHED_TELEMETRY_FILE', help: 'Span file (OTLP JSON lines) for the file exporter.' },
  telemetryFileMaxMb: {
    type: 'int',
    env: 'CELLSCHED_TELEMETRY_FILE_MAX_MB',
    default: DEFAULT_ROTATION.maxBytes / MB,
    min: 0,
    max: 100_000,
    help: 'Rotate the span file when it reaches this many MB (the rotated files are named <file>.<time>-<pid>-<n>.jsonl); 0 never rotates.',
  },
  telemetryFileKeep: {
    type: 'int',
    env: 'CELLSCHED_TELEMETRY_FILE_KEEP',
    default: DEFAULT_ROTATION.keep,
    min: 1,
    max: 1000,
    help: 'Span files kept in all, the active one included: older rotated files are deleted.',
  },
  telemetryFileFlushMs: {
    type: 'int',
    env: 'CELLSCHED_TELEMETRY_FILE_FLUSH_MS',
    default: DEFAULT_FILE_FLUSH_MS,
    min: 0,
    max: 60_000,
    help: 'Spans ending within this many ms of each other are written to the span file together, as one line; 0 writes each span as it ends. Buffered spans are written at exit (a SIGKILL loses the last ones).',
  },
  telemetrySampler: {
    type: 'enum',
    env: 'CELLSCHED_TELEMETRY_SAMPLER',
    values: ['story', 'all'],
    default: DEFAULT_SAMPLING.mode,
    help: "story: keep each trace of telemetryStoryRequests whole (a server's scheduling story across every service), other traces only within telemetryOtherTracesPerMinute; all: every trace.",
  },
  telemetryStoryRequests: {
    type: 'list',
    env: 'CELLSCHED_TELEMETRY_STORY_REQUESTS',
    default: DEFAULT_STORY_REQUESTS,
    help: "API requests ('METHOD /path', * = one path segment) whose traces are always kept whole.",
  },
  telemetryOtherTracesPerMinute: {
    type: 'int',
    env: 'CELLSCHED_TELEMETRY_OTHER_TRACES_PER_MINUTE',
    default: DEFAULT_SAMPLING.otherTracesPerMinute,
    min: 0,
    max: 1_000_000,
    help: 'Traces per minute, per process, kept among the others: reads, placement REST calls, background loops (heartbeats, sweepers, audits, periodic refresh). 0 keeps none.',
  },
  telemetryDbSpansPerTrace: {
    type: 'int',
    env: 'CELLSCHED_TELEMETRY_DB_SPANS_PER_TRACE',
    default: DEFAULT_SAMPLING.dbSpansPerTrace,
    min: 0,
    max: 100_000,
    help: 'PostgreSQL spans (pg.query, pg-pool.connect) kept per kept trace, per process; never outside a kept trace. 0: none, and pg is not instrumented.',
  },
  logLevel: {
    type: 'enum',
    env: 'CELLSCHED_LOG_LEVEL',
    values: ['debug', 'info', 'warn', 'error', 'silent'],
    default: 'info',
    help: 'pino log level.',
  },
  logPretty: { type: 'bool', env: 'CELLSCHED_LOG_PRETTY', default: false, help: 'Human-readable logs through pino-pretty (development).' },
});

/** The loaded values of {@link telemetryConfigSchema} (a service config has them all). */
export type TelemetryConfig = Config<typeof telemetryConfigSchema>;

/** Who this process is: the same for spans and logs. */
export interface ProcessIdentity {
  service: string;
  host: string;
  cell?: string;
}

/** {@link startTelemetry} options from a service's loaded config. */
export function telemetryOptionsFrom(config: TelemetryConfig, who: ProcessIdentity): TelemetryOptions {
  const options: TelemetryOptions = {
    serviceName: who.service,
    host: who.host,
    exporter: config.telemetryExporter,
    sampling: {
      mode: config.telemetrySampler,
      storyRequests: config.telemetryStoryRequests,
      otherTracesPerMinute: config.telemetryOtherTracesPerMinute,
      dbSpansPerTrace: config.telemetryDbSpansPerTrace,
    },
    rotation: { maxBytes: config.telemetryFileMaxMb * MB, keep: config.telemetryFileKeep },
    fileFlushMs: config.telemetryFileFlushMs,
  };
  if (who.cell !== undefined) options.cell = who.cell;
  if (config.telemetryEndpoint !== undefined) options.endpoint = config.telemetryEndpoint;
  if (config.telemetryFile !== undefined) options.file = config.telemetryFile;
  return options;
}

/** {@link createLogger} options from a service's loaded config. */
export function loggerOptionsFrom(config: TelemetryConfig, who: ProcessIdentity): LoggerOptions {
  const options: LoggerOptions = { service: who.service, host: who.host, level: config.logLevel, pretty: config.logPretty };
  if (who.cell !== undefined) options.cell = who.cell;
  return options;
}
