import { loadConfig } from '@cellsched/config';
import { startTelemetry, telemetryOptionsFrom } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { cellConductorConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`) so that the amqplib, gRPC and
// pg instrumentations patch their modules before main.ts requires them.
const config = loadConfig(cellConductorConfigSchema, { argv: process.argv.slice(2) });
startTelemetry(telemetryOptionsFrom(config, { service: 'cell-conductor', host: hostname(), cell: config.cellName }));
