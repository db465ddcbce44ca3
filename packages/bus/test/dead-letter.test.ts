// Dead-lettering: a cast that keeps failing, a non-retryable failure, an unknown RPC
// version and malformed messages all land in <queue>.dlq with their reason; nothing is
// lost. Also: a vhost or exchange the user may not use fails clearly.
import { EchoCastRequest, EchoServiceService } from '@cellsched/wire';
import { Bus, BUS_ERROR, HEADER } from '../src';
import { createVhost, Inspector, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo, echoHandler, EchoFailure, FAST_RETRY, type Seen } from './support/echo';

let vhost: TestVhost;
let bus: Bus;
let inspector: Inspector;

beforeAll(async () => {
  vhost = await createVhost('bus-dlq');
  bus = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'dlq-test' });
  inspector = await Inspector.open(vhost.url);
});

afterAll(async () => {
  await bus?.close();
  await inspector?.close();
  await vhost?.dispose();
});

function header(msg: { properties: { headers?: Record<string, unknown> } }, name: string): unknown {
  const value = msg.properties.headers?.[name];
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

it('dead-letters a cast whose handler always fails after maxDeliveries tries, with its reason', async () => {
  const seen: Seen[] = [];
  const sub = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler(seen) },
    { server: 'poison', maxDeliveries: 3, retryBackoff: FAST_RETRY },
  );
  const receipt = await bus.castClient(EchoServiceService).cast('echoCast', echo(1, -1, 'poison'), { server: 'poison' });
  const dead = await inspector.take('echo.poison.dlq');
  expect(seen.map((s) => s.ctx.attempt)).toEqual([1, 2, 3]);
  expect(header(dead, HEADER.dlqCode)).toBe('echo.induced_failure');
  expect(header(dead, HEADER.dlqMessage)).toBe('induced failure on attempt 3');
  expect(header(dead, HEADER.dlqAttempts)).toBe(3);
  expect(header(dead, HEADER.dlqRoutingKey)).toBe('echo.poison');
  expect(header(dead, HEADER.dlqQueue)).toBe('echo.poison');
  expect(header(dead, HEADER.method)).toBe('echo_cast');
  expect(dead.properties.messageId).toBe(receipt.messageId);
  expect(EchoCastRequest.decode(dead.content)).toEqual({ text: 'poison', failTimes: -1, seq: 1 });
  await waitFor('the original to be acked', async () =>
    (await inspector.count('echo.poison')) === 0 && sub.inFlight === 0 ? true : undefined,
  );
  await sub.close();
});

it('dead-letters at once when the handler says the failure is not retryable', async () => {
  let calls = 0;
  const sub = await bus.serve(
    EchoServiceService,
    {
      echoCast: async () => {
        calls += 1;
        throw new EchoFailure('echo.bad_request', 'text is not acceptable', false);
      },
    },
    { server: 'fatal', maxDeliveries: 5 },
  );
  await bus.castClient(EchoServiceService).cast('echoCast', echo(2), { server: 'fatal' });
  const dead = await inspector.take('echo.fatal.dlq');
  expect(header(dead, HEADER.dlqCode)).toBe('echo.bad_request');
  expect(header(dead, HEADER.dlqAttempts)).toBe(1);
  expect(calls).toBe(1);
  await sub.close();
});

describe('RPC versions', () => {
  const seen: Seen[] = [];
  beforeAll(async () => {
    await bus.serve(EchoServiceService, { echoCast: echoHandler(seen) }, { server: 'versioned' });
  });

  it.each([
    ['2.0', 'an unknown major'],
    ['1.1', 'a newer minor than the server knows'],
  ])('rejects version %s (%s) into the DLQ without calling the handler', async (rpcVersion) => {
    const client = bus.castClient(EchoServiceService, { rpcVersion, topic: 'echo' });
    await client.cast('echoCast', echo(3), { server: 'versioned' });
    const dead = await inspector.take('echo.versioned.dlq');
    expect(header(dead, HEADER.dlqCode)).toBe(BUS_ERROR.rpcVersionUnsupported);
    expect(header(dead, HEADER.dlqMessage)).toBe(
      `cast echo_cast has RPC version ${rpcVersion}; cellsched.v1.EchoService here handles 1.x up to 1.0`,
    );
    expect(header(dead, HEADER.rpcVersion)).toBe(rpcVersion);
    expect(seen).toHaveLength(0);
  });

  it('still handles the current version on the same queue', async () => {
    await bus.castClient(EchoServiceService).cast('echoCast', echo(4), { server: 'versioned' });
    await waitFor('the cast', () => seen[0]);
    expect(seen[0]!.request.seq).toBe(4);
  });

  it.each([
    [{ [HEADER.method]: 'echo_cast' }, Buffer.alloc(0), BUS_ERROR.messageInvalid],
    [{ [HEADER.method]: 'no_such_method', [HEADER.rpcVersion]: '1.0' }, Buffer.alloc(0), BUS_ERROR.messageInvalid],
    [{ [HEADER.method]: 'echo_cast', [HEADER.rpcVersion]: '1.0' }, Buffer.from([0xff, 0xff, 0xff]), BUS_ERROR.messageUndecodable],
  ])('dead-letters a malformed message (%p) as %#', async (headers, body, code) => {
    await inspector.publish('cellsched', 'echo.versioned', body, headers);
    const dead = await inspector.take('echo.versioned.dlq');
    expect(header(dead, HEADER.dlqCode)).toBe(code);
  });
});

describe('permissions', () => {
  it('fails clearly, and fast, on a vhost the user may not use', async () => {
    const denied = await createVhost('bus-denied', null);
    try {
      const started = Date.now();
      const attempt = Bus.connect({ url: denied.url, logger: testLogger, connectTimeoutMs: 10_000 });
      await expect(attempt).rejects.toMatchObject({ code: BUS_ERROR.accessRefused, retryable: false });
      await expect(attempt).rejects.toThrow(`broker refused access to amqp://cellsched:***@127.0.0.1:5672/${denied.name}`);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await denied.dispose();
    }
  });

  it('rejects a cast to an exchange the user may not write, then keeps working', async () => {
    const readOnly = await createVhost('bus-readonly', ['.*', '^$', '.*']);
    const limited = await Bus.connect({ url: readOnly.url, logger: testLogger });
    try {
      const cast = limited.castClient(EchoServiceService).cast('echoCast', echo(5), { timeoutMs: 10_000 });
      await expect(cast).rejects.toMatchObject({ code: BUS_ERROR.publishRefused, retryable: false });
      await expect(limited.castClient(EchoServiceService).cast('echoCast', echo(6), { timeoutMs: 10_000 })).rejects.toMatchObject({
        code: BUS_ERROR.publishRefused,
      });
      expect(limited.connected).toBe(true);
    } finally {
      await limited.close();
      await readOnly.dispose();
    }
  });
});
