import { loadConfig, wantsHelp } from '@cellsched/config';
import { startTelemetry, telemetryOptionsFrom } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { cellConductorConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`) so that the amqplib, gRPC and
// pg instrumentations patch their modules before main.ts requires them.
if (!wantsHelp(process.argv.slice(2))) startTracing();

function startTracing(): void {
  const config = loadConfig(cellConductorConfigSchema, { argv: process.argv.slice(2) });
  startTelemetry(telemetryOptionsFrom(config, { service: 'cell-conductor', host: hostname(), cell: config.cellName }));
}
