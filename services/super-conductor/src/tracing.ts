import { loadConfig } from '@cellsched/config';
import { startTelemetry, telemetryOptionsFrom } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { superConductorConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`) so that the amqplib, gRPC and
// pg instrumentations patch their modules before main.ts requires them.
const config = loadConfig(superConductorConfigSchema, { argv: process.argv.slice(2) });
startTelemetry(telemetryOptionsFrom(config, { service: 'super-conductor', host: hostname() }));
