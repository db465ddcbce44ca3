import { startServiceTelemetry } from '@cellsched/telemetry';
import { placementConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`): see startServiceTelemetry.
startServiceTelemetry({ schema: placementConfigSchema, service: 'placement' });
