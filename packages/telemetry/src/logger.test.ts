import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { FailureError } from '@cellsched/grpc';
import { createLogger, requestLogger } from './logger';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('puts service, host and cell on every line, with a string level and an ISO time', () => {
    const out = capture();
    createLogger({ service: 'scheduler', host: 'sched-1', cell: 'cell1', destination: out.stream }).info({ hosts: 3 }, 'hosts filtered');
    const [line] = out.lines();
    expect(line).toMatchObject({ level: 'info', service: 'scheduler', host: 'sched-1', cell: 'cell1', hosts: 3, msg: 'hosts filtered' });
    expect(new Date(String(line?.['time'])).toISOString()).toBe(line?.['time']);
    expect(line).not.toHaveProperty('trace_id');
  });

  it('leaves out cell for API-level services and honours the level', () => {
    const out = capture();
    const logger = createLogger({ service: 'api', host: 'api-1', level: 'warn', destination: out.stream });
    logger.info('dropped');
    logger.warn('kept');
    expect(out.lines()).toEqual([expect.objectContaining({ msg: 'kept', level: 'warn' })]);
    expect(out.lines()[0]).not.toHaveProperty('cell');
  });

  it('adds trace_id and span_id of the active span', () => {
    const out = capture();
    const logger = createLogger({ service: 's', host: 'h', destination: out.stream });
    const provider = new NodeTracerProvider();
    provider.register();
    const ids = provider.getTracer('test').startActiveSpan('work', (span) => {
      logger.info('inside');
      span.end();
      return span.spanContext();
    });
    logger.info('outside');
    trace.disable();
    const [inside, outside] = out.lines();
    expect(inside).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, trace_flags: '01' });
    expect(ids.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(outside).not.toHaveProperty('trace_id');
  });

  it('logs errors with their stack, and a FailureError with its code', () => {
    const out = capture();
    const logger = createLogger({ service: 's', host: 'h', destination: out.stream });
    logger.error({ err: new Error('disk on fire') }, 'unexpected failure');
    logger.warn({ err: FailureError.of('scheduler.no_valid_host', 'no host', { expected: true }) }, 'expected failure');
    const [plain, failure] = out.lines();
    expect(plain?.['err']).toMatchObject({ type: 'Error', message: 'disk on fire', stack: expect.stringContaining('logger.test.ts') });
    expect(failure?.['err']).toMatchObject({ failure: { code: 'scheduler.no_valid_host', expected: true } });
  });
});

describe('requestLogger', () => {
  it('binds only the request fields it is given, in snake_case', () => {
    const out = capture();
    const logger = createLogger({ service: 's', host: 'h', destination: out.stream });
    requestLogger(logger, { requestId: 'req-1', instanceUuid: 'u-1', rpcMethod: 'select_destinations', attempt: 2 }).info('a');
    requestLogger(logger, { instanceUuid: 'u-2' }).info('b');
    const [a, b] = out.lines();
    expect(a).toMatchObject({ request_id: 'req-1', instance_uuid: 'u-1', rpc_method: 'select_destinations', attempt: 2 });
    expect(b).toMatchObject({ instance_uuid: 'u-2' });
    expect(b).not.toHaveProperty('request_id');
    expect(b).not.toHaveProperty('attempt');
  });
});
