import { startServiceTelemetry } from '@cellsched/telemetry';
import { schedulerConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`): see startServiceTelemetry.
startServiceTelemetry({ schema: schedulerConfigSchema, service: 'scheduler' });
