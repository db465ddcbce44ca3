import { loadConfig } from '@cellsched/config';
import { startTelemetry, telemetryOptionsFrom } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { apiConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`) so that the HTTP, pg and
// amqplib instrumentations patch their modules before main.ts requires them.
const config = loadConfig(apiConfigSchema, { argv: process.argv.slice(2) });
startTelemetry(telemetryOptionsFrom(config, { service: 'api', host: hostname() }));
