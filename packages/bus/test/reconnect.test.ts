// Connection loss without touching the shared broker: a TCP proxy cuts the buses'
// connections and refuses reconnections for a while. Casts wait for the reconnection
// (bounded by their deadline) or reject clearly; consumers re-subscribe by themselves.
import { EchoServiceService } from '@cellsched/wire';
import { Bus, BUS_ERROR } from '../src';
import { AMQP_URL, createVhost, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo } from './support/echo';
import { TcpProxy } from './support/tcp-proxy';

const FAST_RECONNECT = { initialDelayMs: 20, maxDelayMs: 200, factor: 2, jitter: 0.5 };

let vhost: TestVhost;
let proxy: TcpProxy;
const buses: Bus[] = [];

beforeAll(async () => {
  vhost = await createVhost('bus-reconnect');
  const broker = new URL(AMQP_URL);
  proxy = await TcpProxy.start(broker.hostname, Number(broker.port || 5672));
});

afterAll(async () => {
  proxy?.restore();
  await Promise.all(buses.map((b) => b.close(5_000)));
  await proxy?.close();
  await vhost?.dispose();
});

function proxiedUrl(): string {
  const url = new URL(vhost.url);
  url.port = String(proxy.port);
  return url.toString();
}

async function connect(name: string): Promise<Bus> {
  const bus = await Bus.connect({ url: proxiedUrl(), logger: testLogger, name, reconnectBackoff: FAST_RECONNECT });
  buses.push(bus);
  return bus;
}

it('waits out a connection loss, rejects casts whose deadline passes, and resumes consuming', async () => {
  const consumed = new Map<number, number>();
  const consumer = await connect('reconnect-consumer');
  await consumer.serve(EchoServiceService, {
    echoCast: async (req) => {
      consumed.set(req.seq, (consumed.get(req.seq) ?? 0) + 1);
    },
  });
  const publisher = await connect('reconnect-publisher');
  const client = publisher.castClient(EchoServiceService);
  await client.cast('echoCast', echo(1));

  proxy.cut();
  await waitFor('both buses to notice', () => (!publisher.connected && !consumer.connected ? true : undefined));
  const started = Date.now();
  await expect(client.cast('echoCast', echo(2), { timeoutMs: 300 })).rejects.toMatchObject({
    code: BUS_ERROR.unavailable,
    retryable: true,
  });
  expect(Date.now() - started).toBeLessThan(2_000);
  const waiting = [3, 4, 5].map((seq) => client.cast('echoCast', echo(seq), { timeoutMs: 30_000 }));
  proxy.restore();
  await Promise.all(waiting);

  await waitFor('the consumer to resume', () => ([1, 3, 4, 5].every((seq) => consumed.has(seq)) ? true : undefined));
  expect(consumed.has(2)).toBe(false);
  expect(publisher.reconnects).toBe(1);
  expect(consumer.reconnects).toBe(1);
});

it('never resolves a cast the broker did not confirm when the connection drops mid-stream', async () => {
  const consumed = new Set<number>();
  const consumer = await connect('midstream-consumer');
  await consumer.serve(
    EchoServiceService,
    {
      echoCast: async (req) => {
        consumed.add(req.seq);
      },
    },
    { server: 'midstream', prefetch: 64 },
  );
  const publisher = await connect('midstream-publisher');
  const client = publisher.castClient(EchoServiceService);
  const confirmed = new Set<number>();
  const inFlight = new Set<Promise<void>>();
  let inFlightAtCut = 0;
  let restored: Promise<void> | undefined;
  for (let seq = 0; seq < 400; seq++) {
    if (seq === 150) {
      inFlightAtCut = inFlight.size;
      proxy.cut();
      restored = waitFor('the publisher to notice', () => (publisher.connected ? undefined : true)).then(() => proxy.restore());
    }
    while (inFlight.size >= 16) await Promise.race(inFlight);
    const cast: Promise<void> = client
      .cast('echoCast', echo(seq), { server: 'midstream', timeoutMs: 30_000 })
      .then(() => {
        confirmed.add(seq);
      })
      .finally(() => inFlight.delete(cast));
    inFlight.add(cast);
  }
  await Promise.all([...inFlight, restored]);
  expect(inFlightAtCut).toBeGreaterThan(0);
  expect(confirmed.size).toBe(400);
  expect(publisher.reconnects).toBe(1);
  await waitFor('every confirmed cast to be consumed', () => ([...confirmed].every((seq) => consumed.has(seq)) ? true : undefined));
});

it('a server pool takes its queue (and owner lock) back after a connection loss and keeps routing by server', async () => {
  const seen: string[] = [];
  const consumer = await connect('pool-reconnect-consumer');
  await consumer.serve(
    EchoServiceService,
    {
      echoCast: async (_req, ctx) => {
        seen.push(ctx.server ?? '?');
      },
    },
    { servers: ['p1', 'p2', 'p3'], queue: 'echo-pool.reconnect' },
  );
  const publisher = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'pool-reconnect-publisher' });
  buses.push(publisher);
  proxy.cut();
  await waitFor('the pool to notice', () => (!consumer.connected ? true : undefined));
  await publisher.castClient(EchoServiceService).cast('echoCast', echo(1), { server: 'p3' }); // waits in the queue
  proxy.restore();
  await waitFor('the pool to reconnect', () => (consumer.connected ? true : undefined));
  await publisher.castClient(EchoServiceService).cast('echoCast', echo(2), { server: 'p1' });
  await waitFor('both casts', () => (seen.length === 2 ? true : undefined));
  expect(seen).toEqual(['p3', 'p1']);
  expect(consumer.reconnects).toBe(1);
});
