import { loadConfig, wantsHelp } from '@cellsched/config';
import { startTelemetry, telemetryOptionsFrom } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { simulatedComputeConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`) so that amqplib and http are patched before main.ts requires them.
if (!wantsHelp(process.argv.slice(2))) startTracing();

function startTracing(): void {
  const config = loadConfig(simulatedComputeConfigSchema, { argv: process.argv.slice(2) });
  startTelemetry(telemetryOptionsFrom(config, { service: 'simulated-compute', host: hostname(), cell: config.cell }));
}
