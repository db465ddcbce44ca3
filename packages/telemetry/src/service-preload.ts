import { type Config, type ConfigSchema, loadConfig, wantsHelp } from '@cellsched/config';
import { hostname } from 'node:os';
import { type TelemetryConfig, type telemetryConfigSchema, telemetryOptionsFrom } from './config-schema';
import { startTelemetry, type TelemetryOptions } from './start-telemetry';

/** A service schema: it spreads `telemetryConfigSchema`, so its config has every telemetry option. */
type ServiceSchema = ConfigSchema & typeof telemetryConfigSchema;

/** Which service a `tracing.ts` preload starts telemetry for. */
export interface ServicePreload<S extends ServiceSchema> {
  /** The service's config schema (it spreads `telemetryConfigSchema`). */
  schema: S;
  /** Service name of spans and logs (`scheduler`, `cell-conductor`, ...). */
  service: string;
  /** The cell this process serves, for cell-level services. */
  cellOf?: (config: Config<S>) => string;
}

/**
 * The telemetry options a service's preload starts with, from its command line and
 * environment (the same sources as main.ts), or undefined for `--help` (main prints the help
 * and exits; nothing is started). Throws `ConfigError` on a bad config, listing every problem.
 */
export function servicePreloadOptions<S extends ServiceSchema>(
  preload: ServicePreload<S>,
  argv: readonly string[],
  env?: Readonly<Record<string, string | undefined>>,
): TelemetryOptions | undefined {
  if (wantsHelp(argv)) return undefined;
  const config = loadConfig(preload.schema, env === undefined ? { argv: [...argv] } : { argv: [...argv], env });
  const cell = preload.cellOf?.(config);
  const who = { service: preload.service, host: hostname(), ...(cell === undefined ? {} : { cell }) };
  // NOTE: S extends the telemetry schema, so its config has those options; tsc cannot see it through Config<S>.
  return telemetryOptionsFrom(config as unknown as TelemetryConfig, who);
}

/**
 * The whole of every service's `tracing.ts`, loaded first (`node --require dist/tracing.js
 * dist/main.js`) so that the HTTP, amqplib, gRPC and pg instrumentations patch their modules
 * before main.ts requires them. Does nothing for `--help`.
 */
export function startServiceTelemetry<S extends ServiceSchema>(preload: ServicePreload<S>): void {
  const options = servicePreloadOptions(preload, process.argv.slice(2));
  if (options !== undefined) startTelemetry(options);
}
