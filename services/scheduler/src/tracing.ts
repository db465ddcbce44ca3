import { loadConfig, wantsHelp } from '@cellsched/config';
import { startTelemetry, telemetryOptionsFrom } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { schedulerConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`) so that the gRPC and pg
// instrumentations patch their modules before main.ts requires them.
if (!wantsHelp(process.argv.slice(2))) {
  const config = loadConfig(schedulerConfigSchema, { argv: process.argv.slice(2) });
  startTelemetry(telemetryOptionsFrom(config, { service: 'scheduler', host: hostname() }));
}
