import { EchoServiceClient } from '@cellsched/wire';
import { FailureError, GrpcStatus, createGrpcClient } from '@cellsched/grpc';
import { closedPort, startEcho } from './echo-fixture';

const req = (text: string, delayMs = 0) => ({ text, failWithCode: '', delayMs });

describe('grpc client retries across replicas', () => {
  it('retries an idempotent call on the second replica when the first address is a closed port', async () => {
    const b = await startEcho('b');
    const dead = `127.0.0.1:${await closedPort()}`;
    const client = createGrpcClient(EchoServiceClient, { addresses: [dead, b.address], idempotent: ['echo'], backoffInitialMs: 10 });
    try {
      for (let i = 0; i < 4; i++) expect((await client.echo(req(`r${i}`))).replica).toBe('b');
      expect(b.seen.map((s) => s.text)).toEqual(['r0', 'r1', 'r2', 'r3']);
    } finally {
      client.close();
      await b.shutdown(1000);
    }
  });

  it('does not retry a call that is not idempotent, and reports grpc.unavailable', async () => {
    const dead = `127.0.0.1:${await closedPort()}`;
    const client = createGrpcClient(EchoServiceClient, { addresses: [dead] });
    try {
      const err = await client.echo(req('once')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(FailureError);
      const failure = err as FailureError;
      expect(failure.status).toBe(GrpcStatus.UNAVAILABLE);
      expect(failure.failure).toMatchObject({ code: 'grpc.unavailable', retryable: true, expected: false });
      expect(failure.origin?.attempts).toBe(1);
    } finally {
      client.close();
    }
  });

  it('gives up after maxAttempts when every replica is down', async () => {
    const dead = [`127.0.0.1:${await closedPort()}`, `127.0.0.1:${await closedPort()}`];
    const client = createGrpcClient(EchoServiceClient, { addresses: dead, idempotent: ['echo'], maxAttempts: 3, backoffInitialMs: 5 });
    try {
      const err = (await client.echo(req('x')).then(
        () => undefined,
        (e: unknown) => e,
      )) as FailureError;
      expect(err.code).toBe('grpc.unavailable');
      expect(err.origin?.attempts).toBe(3);
    } finally {
      client.close();
    }
  });

  it('keeps serving from the second replica when the first shuts down mid-run', async () => {
    const a = await startEcho('a');
    const b = await startEcho('b');
    const client = createGrpcClient(EchoServiceClient, { addresses: [a.address, b.address], idempotent: ['echo'], backoffInitialMs: 10 });
    try {
      const replicas: string[] = [];
      for (let i = 0; i < 30; i++) {
        if (i === 10) await a.shutdown(1000);
        replicas.push((await client.echo(req(`m${i}`))).replica);
      }
      expect(new Set(replicas.slice(0, 10))).toEqual(new Set(['a', 'b']));
      expect(replicas.slice(10).every((r) => r === 'b')).toBe(true);
    } finally {
      client.close();
      await a.shutdown(1000);
      await b.shutdown(1000);
    }
  });

  it('lets an in-flight call finish during a graceful shutdown', async () => {
    const a = await startEcho('a');
    const client = createGrpcClient(EchoServiceClient, { addresses: [a.address] });
    try {
      const inFlight = client.echo(req('slow', 300));
      await new Promise((r) => setTimeout(r, 100));
      await a.shutdown(3000);
      await expect(inFlight).resolves.toEqual({ text: 'slow', replica: 'a' });
    } finally {
      client.close();
    }
  });

  it('cancels calls still running when the shutdown timeout passes', async () => {
    const a = await startEcho('a');
    const client = createGrpcClient(EchoServiceClient, { addresses: [a.address] });
    try {
      const inFlight = client.echo(req('stuck', 5000)).then(
        () => undefined,
        (e: unknown) => e as FailureError,
      );
      await new Promise((r) => setTimeout(r, 100));
      const t0 = Date.now();
      await a.shutdown(100);
      expect(Date.now() - t0).toBeLessThan(1000);
      const err = await inFlight;
      expect(err).toBeInstanceOf(FailureError);
      expect([GrpcStatus.CANCELLED, GrpcStatus.UNAVAILABLE]).toContain(err?.status);
    } finally {
      client.close();
    }
  });
});

describe('grpc client options', () => {
  it('rejects bad options with every problem listed, before connecting', () => {
    expect(() =>
      createGrpcClient(EchoServiceClient, { addresses: ['nohost', '127.0.0.1:1'], deadlineMs: 0, maxAttempts: 1.5, backoffMaxMs: -1 }),
    ).toThrow(
      "invalid grpc client options: addresses: 'nohost' is not host:port; deadlineMs must be > 0 (got 0); " +
        'maxAttempts must be an integer >= 1 (got 1.5); backoffMaxMs must be >= 0 (got -1)',
    );
    expect(() => createGrpcClient(EchoServiceClient, { addresses: [] })).toThrow('at least one replica address is required');
  });

  it('rejects a call with a non-positive deadline without sending it', async () => {
    const a = await startEcho('a');
    const client = createGrpcClient(EchoServiceClient, { addresses: [a.address] });
    try {
      await expect(client.echo(req('x'), { deadlineMs: -5 })).rejects.toThrow('deadlineMs must be > 0');
      expect(a.seen).toEqual([]);
    } finally {
      client.close();
      await a.shutdown(1000);
    }
  });
});
