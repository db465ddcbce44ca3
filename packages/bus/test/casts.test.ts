// Casts end to end on a private vhost: typed round trip, routing by server, bounded
// retries, unroutable casts, bad input, graceful close.
import { EchoServiceService } from '@cellsched/wire';
import { Bus, BUS_ERROR, HEADER, isPublishUnroutable } from '../src';
import { createVhost, Inspector, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo, echoHandler, FAST_RETRY, type Seen } from './support/echo';

let vhost: TestVhost;
let bus: Bus;
let inspector: Inspector;

beforeAll(async () => {
  vhost = await createVhost('bus-casts');
  bus = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'casts-test' });
  inspector = await Inspector.open(vhost.url);
});

afterAll(async () => {
  await bus?.close();
  await inspector?.close();
  await vhost?.dispose();
});

it('delivers a typed cast with its method, version, attempt and routing key', async () => {
  const seen: Seen[] = [];
  const sub = await bus.serve(EchoServiceService, { echoCast: echoHandler(seen) }, { retryBackoff: FAST_RETRY });
  const receipt = await bus.castClient(EchoServiceService).cast('echoCast', echo(1, 0, 'hello'));
  expect(receipt.routingKey).toBe('echo');
  await waitFor('the cast', () => seen[0]);
  const { request, ctx } = seen[0]!;
  expect(request).toEqual({ text: 'hello', failTimes: 0, seq: 1 });
  expect(ctx).toMatchObject({ method: 'echo_cast', rpcVersion: '1.0', attempt: 1, routingKey: 'echo', messageId: receipt.messageId });
  expect(ctx.headers[HEADER.method]).toBe('echo_cast');
  expect(ctx.headers[HEADER.service]).toBe('cellsched.v1.EchoService');
  await sub.close();
  expect(await inspector.count('echo')).toBe(0);
});

it('routes <topic>.<server> casts only to that server queue', async () => {
  const shared: Seen[] = [];
  const host12: Seen[] = [];
  const subs = [
    await bus.serve(EchoServiceService, { echoCast: echoHandler(shared) }),
    await bus.serve(EchoServiceService, { echoCast: echoHandler(host12) }, { server: 'host-12' }),
  ];
  const client = bus.castClient(EchoServiceService);
  expect((await client.cast('echoCast', echo(2), { server: 'host-12' })).routingKey).toBe('echo.host-12');
  await client.cast('echoCast', echo(3));
  await waitFor('both casts', () => (host12.length === 1 && shared.length === 1 ? true : undefined));
  expect(host12[0]!.request.seq).toBe(2);
  expect(host12[0]!.ctx.routingKey).toBe('echo.host-12');
  expect(shared[0]!.request.seq).toBe(3);
  await Promise.all(subs.map((s) => s.close()));
});

it('redelivers a failing cast until it succeeds within maxDeliveries', async () => {
  const seen: Seen[] = [];
  const sub = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler(seen) },
    { server: 'retry', maxDeliveries: 3, retryBackoff: FAST_RETRY },
  );
  await bus.castClient(EchoServiceService).cast('echoCast', echo(4, 2), { server: 'retry' });
  await waitFor('three attempts', () => (seen.length >= 3 ? true : undefined));
  await waitFor('the ack', async () => (sub.inFlight === 0 ? true : undefined));
  expect(seen.map((s) => s.ctx.attempt)).toEqual([1, 2, 3]);
  expect(await inspector.count('echo.retry')).toBe(0);
  expect(await inspector.count('echo.retry.dlq')).toBe(0);
  await sub.close();
});

it('rejects a cast no queue is bound to, and bad arguments, without sending', async () => {
  const client = bus.castClient(EchoServiceService);
  await expect(client.cast('echoCast', echo(5), { server: 'no-such-host' })).rejects.toMatchObject({ code: BUS_ERROR.publishUnroutable });
  expect(isPublishUnroutable(await client.cast('echoCast', echo(5), { server: 'no-such-host' }).catch((e: unknown) => e))).toBe(true);
  const bad = await client.cast('echoCast', echo(6), { server: 'bad*host' }).catch((e: unknown) => e);
  expect(bad).toMatchObject({ code: BUS_ERROR.invalidArgument });
  expect(isPublishUnroutable(bad)).toBe(false);
  await expect(client.cast('nope' as 'echoCast', echo(7))).rejects.toMatchObject({ code: BUS_ERROR.invalidArgument });
  await expect(client.cast('echoCast', echo(8), { timeoutMs: 0 })).rejects.toMatchObject({ code: BUS_ERROR.invalidArgument });
  await expect(Bus.connect({ url: 'http://x', logger: testLogger, castTimeoutMs: -1 })).rejects.toThrow(
    'url http://x/ is not amqp:// or amqps://; castTimeoutMs must be a positive number (got -1)',
  );
  await expect(bus.serve(EchoServiceService, {})).rejects.toMatchObject({ code: BUS_ERROR.invalidArgument });
  await expect(bus.serve(EchoServiceService, { echoCast: echoHandler([]) }, { prefetch: 0 })).rejects.toMatchObject({
    code: BUS_ERROR.invalidArgument,
  });
});

it('closes gracefully: waits for the in-flight handler, acks it, then refuses casts', async () => {
  const other = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'close-test' });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const started: number[] = [];
  let finished = false;
  await other.serve(
    EchoServiceService,
    {
      echoCast: async (req) => {
        started.push(req.seq);
        await gate;
        finished = true;
      },
    },
    { server: 'closing' },
  );
  await other.castClient(EchoServiceService).cast('echoCast', echo(9), { server: 'closing' });
  await waitFor('the handler to start', () => started[0]);
  const closing = other.close();
  // NOTE: a quorum queue keeps counting a cancelled consumer until its unacked messages
  // settle, so the broker cannot tell us the cancel happened; give close() a window instead.
  const early = await Promise.race([closing.then(() => 'closed'), new Promise((r) => setTimeout(() => r('waiting'), 300))]);
  expect(early).toBe('waiting');
  release();
  await closing;
  expect(finished).toBe(true);
  expect(await inspector.count('echo.closing')).toBe(0);
  await expect(other.castClient(EchoServiceService).cast('echoCast', echo(10))).rejects.toMatchObject({ code: BUS_ERROR.closed });
});
