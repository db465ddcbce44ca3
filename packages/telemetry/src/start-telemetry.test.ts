import { startTelemetry, validateTelemetryOptions } from './start-telemetry';

describe('validateTelemetryOptions', () => {
  it('accepts each exporter with what it needs', () => {
    expect(validateTelemetryOptions({ serviceName: 's', host: 'h', exporter: 'none' })).toEqual([]);
    expect(validateTelemetryOptions({ serviceName: 's', host: 'h', exporter: 'file', file: '/tmp/x.jsonl' })).toEqual([]);
    expect(
      validateTelemetryOptions({ serviceName: 's', host: 'h', cell: 'cell1', exporter: 'otlp', endpoint: 'http://127.0.0.1:4318' }),
    ).toEqual([]);
  });

  it('lists every problem at once', () => {
    const errors = validateTelemetryOptions({ serviceName: '', host: '', exporter: 'file', endpoint: 'localhost:4318' });
    expect(errors).toEqual([
      'serviceName is required',
      'host is required',
      "file is required when exporter is 'file'",
      "endpoint must be an http(s) URL, got 'localhost:4318'",
    ]);
    expect(validateTelemetryOptions({ serviceName: 's', host: 'h', exporter: 'jaeger' as 'otlp' })).toEqual([
      "exporter must be one of otlp, file, console, none, got 'jaeger'",
    ]);
  });

  it('makes startTelemetry throw before starting anything', () => {
    expect(() => startTelemetry({ serviceName: 's', host: '', exporter: 'none' })).toThrow('invalid telemetry options: host is required');
  });
});
