import { startServiceTelemetry } from '@cellsched/telemetry';
import { simulatedComputeConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`): see startServiceTelemetry.
startServiceTelemetry({ schema: simulatedComputeConfigSchema, service: 'simulated-compute', cellOf: (config) => config.cell });
