import { defineConfig, loadConfig } from '@cellsched/config';
import { loggerOptionsFrom, telemetryConfigSchema, telemetryOptionsFrom } from './config-schema';
import { validateTelemetryOptions } from './start-telemetry';

const schema = defineConfig({ ...telemetryConfigSchema, port: { type: 'int', env: 'CELLSCHED_TEST_PORT', default: 1, help: 'x' } });
const who = { service: 'cell-conductor', host: 'cc-1', cell: 'cell1' };

describe('telemetryConfigSchema', () => {
  it('defaults to no exporter, info logs, no pretty printing', () => {
    const config = loadConfig(schema, { env: {}, file: false });
    expect(telemetryOptionsFrom(config, who)).toEqual({ serviceName: 'cell-conductor', host: 'cc-1', cell: 'cell1', exporter: 'none' });
    expect(loggerOptionsFrom(config, who)).toEqual({ service: 'cell-conductor', host: 'cc-1', cell: 'cell1', level: 'info', pretty: false });
  });

  it('maps the environment to valid startTelemetry and createLogger options', () => {
    const config = loadConfig(schema, {
      env: { CELLSCHED_TELEMETRY_EXPORTER: 'otlp', CELLSCHED_TELEMETRY_ENDPOINT: 'http://127.0.0.1:4318', CELLSCHED_LOG_LEVEL: 'debug', CELLSCHED_LOG_PRETTY: 'true' },
      file: false,
    });
    const options = telemetryOptionsFrom(config, { service: 'api', host: 'api-1' });
    expect(options).toEqual({ serviceName: 'api', host: 'api-1', exporter: 'otlp', endpoint: 'http://127.0.0.1:4318' });
    expect(validateTelemetryOptions(options)).toEqual([]);
    expect(loggerOptionsFrom(config, { service: 'api', host: 'api-1' })).toEqual({ service: 'api', host: 'api-1', level: 'debug', pretty: true });
  });

  it('rejects an unknown exporter and a non-http endpoint at load time', () => {
    expect(() => loadConfig(schema, { env: { CELLSCHED_TELEMETRY_EXPORTER: 'jaeger', CELLSCHED_TELEMETRY_ENDPOINT: 'grpc://x:4317' }, file: false }))
      .toThrow(/CELLSCHED_TELEMETRY_EXPORTER[\s\S]*CELLSCHED_TELEMETRY_ENDPOINT|CELLSCHED_TELEMETRY_ENDPOINT[\s\S]*CELLSCHED_TELEMETRY_EXPORTER/);
  });
});
