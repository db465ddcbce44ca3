import { type Config, defineConfig } from '@cellsched/config';
import type { LoggerOptions } from './logger';
import type { TelemetryOptions } from './start-telemetry';

/**
 * The telemetry and logging options every service declares: spread it into the service's
 * own schema (`defineConfig({ ...telemetryConfigSchema, port: ... })`) so all processes
 * take the same variables.
 */
export const telemetryConfigSchema = defineConfig({
  telemetryExporter: {
    type: 'enum', env: 'CELLSCHED_TELEMETRY_EXPORTER', values: ['none', 'otlp', 'file', 'console'], default: 'none',
    help: 'Where OpenTelemetry spans go: none, otlp (to telemetryEndpoint), file (OTLP JSON lines) or console.',
  },
  telemetryEndpoint: {
    type: 'url', env: 'CELLSCHED_TELEMETRY_ENDPOINT', protocols: ['http:', 'https:'],
    help: 'OTLP/HTTP base URL for the otlp exporter, e.g. http://127.0.0.1:4318 (trace-tail or Jaeger). Default: the OTEL_* variables, else localhost.',
  },
  telemetryFile: { type: 'string', env: 'CELLSCHED_TELEMETRY_FILE', help: 'Span file (OTLP JSON lines) for the file exporter.' },
  logLevel: {
    type: 'enum', env: 'CELLSCHED_LOG_LEVEL', values: ['debug', 'info', 'warn', 'error', 'silent'], default: 'info', help: 'pino log level.',
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
  const options: TelemetryOptions = { serviceName: who.service, host: who.host, exporter: config.telemetryExporter };
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
