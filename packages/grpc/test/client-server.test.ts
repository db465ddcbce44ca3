import { Writable } from 'node:stream';
import pino from 'pino';
import { EchoServiceClient, EchoServiceService } from '@cellsched/wire';
import {
  FailureError,
  GrpcStatus,
  INTERNAL_FAILURE_CODE,
  UNAVAILABLE_FAILURE_CODE,
  bindService,
  createGrpcClient,
  runWithRequestContext,
  startGrpcServer,
} from '@cellsched/grpc';
import { ECHO_DIAGNOSIS, silentLogger, startEcho } from './echo-fixture';

type Echo = Awaited<ReturnType<typeof startEcho>>;

async function rejection(p: Promise<unknown>): Promise<FailureError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FailureError);
    return err as FailureError;
  }
  throw new Error('expected the call to fail');
}

describe('grpc client and server', () => {
  let a: Echo;
  let client: ReturnType<typeof createGrpcClient<typeof EchoServiceClient.service>>;

  beforeAll(async () => {
    a = await startEcho('a');
    client = createGrpcClient(EchoServiceClient, { addresses: [a.address], deadlineMs: 2000 });
  });
  afterAll(async () => {
    client.close();
    await a.shutdown(1000);
  });

  it('round-trips a request and sends the request id in metadata', async () => {
    const res = await client.echo({ text: 'hello', failWithCode: '', delayMs: 0 }, { requestId: 'req-test-1' });
    expect(res).toEqual({ text: 'hello', replica: 'a' });
    expect(a.seen.at(-1)).toEqual({ text: 'hello', requestId: 'req-test-1' });
  });

  it('takes the request id from the current request context, or makes a req-<uuid> one', async () => {
    await runWithRequestContext({ requestId: 'req-from-context' }, () => client.echo({ text: 'ctx', failWithCode: '', delayMs: 0 }));
    expect(a.seen.at(-1)?.requestId).toBe('req-from-context');
    await client.echo({ text: 'fresh', failWithCode: '', delayMs: 0 });
    expect(a.seen.at(-1)?.requestId).toMatch(/^req-[0-9a-f-]{36}$/);
  });

  it('fails with DEADLINE_EXCEEDED when the handler outlives the deadline, without retrying', async () => {
    const before = a.seen.length;
    const t0 = Date.now();
    const err = await rejection(client.echo({ text: 'slow', failWithCode: '', delayMs: 1500 }, { deadlineMs: 200 }));
    expect(Date.now() - t0).toBeLessThan(1200);
    expect(err.status).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(err.code).toBe('grpc.deadline_exceeded');
    expect(err.retryable).toBe(true);
    expect(err.origin).toEqual({ address: a.address, method: '/cellsched.v1.EchoService/Echo', attempts: 1 });
    expect(a.seen.length - before).toBe(1);
  });

  it('cancels a call when its signal aborts, and the handler sees the cancellation', async () => {
    const controller = new AbortController();
    const pending = client.echo({ text: 'cancel-me', failWithCode: '', delayMs: 3000 }, { signal: controller.signal, idempotent: true });
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    const err = await rejection(pending);
    expect(err.status).toBe(GrpcStatus.CANCELLED);
    expect(err.code).toBe('grpc.cancelled');
    expect(err.origin?.attempts).toBe(1);
    for (let i = 0; i < 50 && !a.seen.find((s) => s.text === 'cancel-me')?.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    expect(a.seen.filter((s) => s.text === 'cancel-me')).toEqual([expect.objectContaining({ aborted: true })]);
  });

  it('delivers a thrown Failure with code, retryable, metadata and diagnosis intact', async () => {
    const err = await rejection(client.echo({ text: 'x', failWithCode: 'placement.concurrent_update', delayMs: 0 }));
    expect(err.status).toBe(GrpcStatus.ABORTED);
    expect(err.failure).toEqual({
      code: 'placement.concurrent_update',
      message: 'echo failed with placement.concurrent_update',
      retryable: true,
      expected: true,
      metadata: { text: 'x', replica: 'a' },
      diagnosis: ECHO_DIAGNOSIS,
    });
  });

  it.each([
    ['scheduler.no_valid_host', GrpcStatus.FAILED_PRECONDITION],
    ['placement.resource_provider.not_found', GrpcStatus.NOT_FOUND],
    ['placement.query.bad_value', GrpcStatus.INVALID_ARGUMENT],
    ['echo.explicit_status', GrpcStatus.RESOURCE_EXHAUSTED],
  ])('sends %s with status %s', async (code, expected) => {
    const err = await rejection(client.echo({ text: 'x', failWithCode: code, delayMs: 0 }));
    expect(err.code).toBe(code);
    expect(err.status).toBe(expected);
  });

  it('turns an unexpected error into INTERNAL with a generic Failure, no internals leaked', async () => {
    const err = await rejection(client.echo({ text: 'x', failWithCode: 'echo.crash', delayMs: 0 }));
    expect(err.status).toBe(GrpcStatus.INTERNAL);
    expect(err.failure).toMatchObject({ code: INTERNAL_FAILURE_CODE, retryable: false, expected: false });
    expect(err.message).not.toContain('boom');
  });

  it.each(['echo.db_restart', 'echo.socket'])(
    'turns a lost database or socket (%s) into UNAVAILABLE with a retryable Failure',
    async (code) => {
      const err = await rejection(client.echo({ text: 'x', failWithCode: code, delayMs: 0 }));
      expect(err.status).toBe(GrpcStatus.UNAVAILABLE);
      expect(err.failure).toMatchObject({ code: UNAVAILABLE_FAILURE_CODE, retryable: true, expected: false });
      expect(err.message).not.toContain('127.0.0.1');
    },
  );
});

describe('request id propagation through a chain of calls', () => {
  it('carries the inbound x-request-id to the calls a handler makes', async () => {
    const leaf = await startEcho('leaf');
    const leafClient = createGrpcClient(EchoServiceClient, { addresses: [leaf.address] });
    const relay = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      services: [
        bindService(EchoServiceService, {
          echo: async (req) => ({ ...(await leafClient.echo(req)), replica: 'relay' }),
          echoCast: () => Promise.resolve({}),
        }),
      ],
    });
    const client = createGrpcClient(EchoServiceClient, { addresses: [relay.address] });
    try {
      expect(await client.echo({ text: 'hop', failWithCode: '', delayMs: 0 }, { requestId: 'req-chain' })).toEqual({
        text: 'hop',
        replica: 'relay',
      });
      expect(leaf.seen).toEqual([{ text: 'hop', requestId: 'req-chain' }]);
    } finally {
      client.close();
      leafClient.close();
      await relay.shutdown(1000);
      await leaf.shutdown(1000);
    }
  });
});

describe('server logging', () => {
  it('logs an unexpected error at error with its stack, an expected Failure at warn, both with the request id', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        cb();
      },
    });
    const server = await startEcho('log', [], pino({ level: 'info' }, stream));
    const client = createGrpcClient(EchoServiceClient, { addresses: [server.address] });
    try {
      await client.echo({ text: 'x', failWithCode: 'echo.crash', delayMs: 0 }, { requestId: 'req-crash' }).catch(() => undefined);
      await client
        .echo({ text: 'x', failWithCode: 'scheduler.no_valid_host', delayMs: 0 }, { requestId: 'req-nvh' })
        .catch(() => undefined);
    } finally {
      client.close();
      await server.shutdown(1000);
    }
    const crash = lines.find((l) => l['request_id'] === 'req-crash');
    expect(crash).toMatchObject({
      level: 50,
      rpc_method: '/cellsched.v1.EchoService/Echo',
      err: { message: 'boom: a bug in the handler' },
    });
    expect((crash?.['err'] as { stack: string }).stack).toContain('echo-fixture.ts');
    expect(lines.find((l) => l['request_id'] === 'req-nvh')).toMatchObject({ level: 40, failure_code: 'scheduler.no_valid_host' });
  });
});
