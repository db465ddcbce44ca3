import { startServiceTelemetry } from '@cellsched/telemetry';
import { cellConductorConfigSchema } from './config';

// Loaded first (`node --require dist/tracing.js dist/main.js`): see startServiceTelemetry.
startServiceTelemetry({ schema: cellConductorConfigSchema, service: 'cell-conductor', cellOf: (config) => config.cellName });
