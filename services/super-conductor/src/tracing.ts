import { startServiceTelemetry } from '@cellsched/telemetry';
import { superConductorConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`): see startServiceTelemetry.
startServiceTelemetry({ schema: superConductorConfigSchema, service: 'super-conductor' });
