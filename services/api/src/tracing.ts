import { startServiceTelemetry } from '@cellsched/telemetry';
import { apiConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`): see startServiceTelemetry.
startServiceTelemetry({ schema: apiConfigSchema, service: 'api' });
