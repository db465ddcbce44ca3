import { defineConfig, loadConfig } from '@cellsched/config';
import { loggerOptionsFrom, telemetryConfigSchema, telemetryOptionsFrom } from './config-schema';
import { validateTelemetryOptions } from './start-telemetry';

const schema = defineConfig({ ...telemetryConfigSchema, port: { type: 'int', env: 'CELLSCHED_TEST_PORT', default: 1, help: 'x' } });
const who = { service: 'cell-conductor', host: 'cc-1', cell: 'cell1' };

describe('telemetryConfigSchema', () => {
  it('defaults to no exporter, the story sampler, 4 span files of 64 MB written every 200 ms, info logs, no pretty printing', () => {
    const config = loadConfig(schema, { env: {}, file: false });
    expect(telemetryOptionsFrom(config, who)).toEqual({
      serviceName: 'cell-conductor',
      host: 'cc-1',
      cell: 'cell1',
      exporter: 'none',
      sampling: {
        mode: 'story',
        storyRequests: ['POST /v2.1/servers', 'POST /v2.1/servers/*/action', 'DELETE /v2.1/servers/*'],
        otherTracesPerMinute: 0,
        dbSpansPerTrace: 0,
      },
      rotation: { maxBytes: 64 * 1024 * 1024, keep: 4 },
      fileFlushMs: 200,
    });
    expect(loggerOptionsFrom(config, who)).toEqual({
      service: 'cell-conductor',
      host: 'cc-1',
      cell: 'cell1',
      level: 'info',
      pretty: false,
    });
  });

  it('maps the environment to valid startTelemetry and createLogger options', () => {
    const config = loadConfig(schema, {
      env: {
        CELLSCHED_TELEMETRY_EXPORTER: 'otlp',
        CELLSCHED_TELEMETRY_ENDPOINT: 'http://127.0.0.1:4318',
        CELLSCHED_LOG_LEVEL: 'debug',
        CELLSCHED_LOG_PRETTY: 'true',
      },
      file: false,
    });
    const options = telemetryOptionsFrom(config, { service: 'api', host: 'api-1' });
    expect(options).toMatchObject({ serviceName: 'api', host: 'api-1', exporter: 'otlp', endpoint: 'http://127.0.0.1:4318' });
    expect(validateTelemetryOptions(options)).toEqual([]);
    expect(loggerOptionsFrom(config, { service: 'api', host: 'api-1' })).toEqual({
      service: 'api',
      host: 'api-1',
      level: 'debug',
      pretty: true,
    });
  });

  it('maps the sampling and rotation knobs', () => {
    const config = loadConfig(schema, {
      env: {
        CELLSCHED_TELEMETRY_SAMPLER: 'all',
        CELLSCHED_TELEMETRY_STORY_REQUESTS: 'POST /v2.1/servers, PUT /v2.1/os-services/*',
        CELLSCHED_TELEMETRY_OTHER_TRACES_PER_MINUTE: '6',
        CELLSCHED_TELEMETRY_DB_SPANS_PER_TRACE: '20',
        CELLSCHED_TELEMETRY_FILE_MAX_MB: '0',
        CELLSCHED_TELEMETRY_FILE_KEEP: '2',
        CELLSCHED_TELEMETRY_FILE_FLUSH_MS: '0',
      },
      file: false,
    });
    const options = telemetryOptionsFrom(config, who);
    expect(options).toMatchObject({
      sampling: {
        mode: 'all',
        storyRequests: ['POST /v2.1/servers', 'PUT /v2.1/os-services/*'],
        otherTracesPerMinute: 6,
        dbSpansPerTrace: 20,
      },
      rotation: { maxBytes: 0, keep: 2 },
      fileFlushMs: 0,
    });
    expect(validateTelemetryOptions(options)).toEqual([]);
    expect(validateTelemetryOptions({ ...options, fileFlushMs: -1 })).toEqual(['fileFlushMs must be an integer >= 0']);
  });

  it('refuses a request pattern that is not METHOD /path when telemetry starts, with every other problem', () => {
    const config = loadConfig(schema, { env: { CELLSCHED_TELEMETRY_STORY_REQUESTS: '/v2.1/servers' }, file: false });
    expect(validateTelemetryOptions({ ...telemetryOptionsFrom(config, who), host: '' })).toEqual([
      'host is required',
      "request pattern '/v2.1/servers' is not 'METHOD /path' (e.g. 'POST /v2.1/servers/*/action')",
    ]);
    expect(() =>
      loadConfig(schema, { env: { CELLSCHED_TELEMETRY_FILE_KEEP: '0', CELLSCHED_TELEMETRY_SAMPLER: 'some' }, file: false }),
    ).toThrow(
      /CELLSCHED_TELEMETRY_FILE_KEEP[\s\S]*CELLSCHED_TELEMETRY_SAMPLER|CELLSCHED_TELEMETRY_SAMPLER[\s\S]*CELLSCHED_TELEMETRY_FILE_KEEP/,
    );
  });

  it('rejects an unknown exporter and a non-http endpoint at load time', () => {
    expect(() =>
      loadConfig(schema, { env: { CELLSCHED_TELEMETRY_EXPORTER: 'jaeger', CELLSCHED_TELEMETRY_ENDPOINT: 'grpc://x:4317' }, file: false }),
    ).toThrow(
      /CELLSCHED_TELEMETRY_EXPORTER[\s\S]*CELLSCHED_TELEMETRY_ENDPOINT|CELLSCHED_TELEMETRY_ENDPOINT[\s\S]*CELLSCHED_TELEMETRY_EXPORTER/,
    );
  });
});
