import { defineConfig } from '@cellsched/config';
import { hostname } from 'node:os';
import { telemetryConfigSchema } from './config-schema';
import { servicePreloadOptions } from './service-preload';

const schema = defineConfig({
  ...telemetryConfigSchema,
  cellName: { type: 'string', env: 'CELLSCHED_TEST_CELL_NAME', default: 'cell1', help: 'x' },
});

test('a cell-level service names its cell; the exporter comes from the same env and argv as main', () => {
  const options = servicePreloadOptions({ schema, service: 'cell-conductor', cellOf: (c) => c.cellName }, [], {
    CELLSCHED_TEST_CELL_NAME: 'cell7',
    CELLSCHED_TELEMETRY_EXPORTER: 'file',
    CELLSCHED_TELEMETRY_FILE: '/tmp/x.jsonl',
  });
  expect(options).toMatchObject({ serviceName: 'cell-conductor', host: hostname(), cell: 'cell7', exporter: 'file', file: '/tmp/x.jsonl' });
});

test('an API-level service has no cell', () => {
  const options = servicePreloadOptions({ schema, service: 'api' }, [], {});
  expect(options?.serviceName).toBe('api');
  expect(options).not.toHaveProperty('cell');
});

test('--help starts nothing, even with a config that would not load', () => {
  expect(servicePreloadOptions({ schema, service: 'api' }, ['--help'], { CELLSCHED_TELEMETRY_EXPORTER: 'jaeger' })).toBeUndefined();
  expect(() => servicePreloadOptions({ schema, service: 'api' }, [], { CELLSCHED_TELEMETRY_EXPORTER: 'jaeger' })).toThrow(
    /CELLSCHED_TELEMETRY_EXPORTER/,
  );
});
