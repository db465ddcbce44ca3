// Zero loss across a broker restart: 2,000 casts are published while RabbitMQ is stopped
// and started (`rabbitmqctl stop_app` / `start_app`) in the middle of the stream. Every
// cast whose promise resolved must be consumed (duplicates allowed, counted), and both
// buses must reconnect and resume by themselves. Serial: it disturbs the shared broker.
import { EchoServiceService } from '@cellsched/wire';
import { Bus, type BusError } from '../src';
import { createVhost, rabbitmqctl, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo } from './support/echo';

const TOTAL = 2000;
const STOP_AT = 600;
/** The stream does not go past this seq until the publisher has seen the broker go away. */
const HOLD_AT = 1000;
const CONCURRENCY = 20;
const FAST_RECONNECT = { initialDelayMs: 100, maxDelayMs: 1000, factor: 2, jitter: 0.5 };

let vhost: TestVhost;
const buses: Bus[] = [];

beforeAll(async () => {
  vhost = await createVhost('bus-restart');
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.close(5_000)));
  await vhost?.dispose();
});

async function bounceBroker(): Promise<void> {
  try {
    await rabbitmqctl('stop_app');
  } finally {
    await rabbitmqctl('start_app');
    await rabbitmqctl('await_startup', '--timeout', '60');
  }
}

it('consumes every confirmed cast after a broker restart in the middle of the stream', async () => {
  const consumed = new Map<number, number>();
  const consumer = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'restart-consumer', reconnectBackoff: FAST_RECONNECT });
  buses.push(consumer);
  await consumer.serve(
    EchoServiceService,
    {
      echoCast: async (req) => {
        consumed.set(req.seq, (consumed.get(req.seq) ?? 0) + 1);
      },
    },
    { prefetch: 50 },
  );
  // A server pool on the same connection: after the restart it must take its queue and owner lock back.
  const poolSeen: string[] = [];
  const poolServers = Array.from({ length: 50 }, (_, i) => `p${i}`);
  await consumer.serve(
    EchoServiceService,
    {
      echoCast: async (_req, ctx) => {
        poolSeen.push(ctx.server ?? '?');
      },
    },
    { servers: poolServers, queue: 'echo-pool.restart' },
  );
  const publisher = await Bus.connect({
    url: vhost.url,
    logger: testLogger,
    name: 'restart-publisher',
    reconnectBackoff: FAST_RECONNECT,
    castTimeoutMs: 90_000,
  });
  buses.push(publisher);
  const client = publisher.castClient(EchoServiceService);

  const confirmed = new Set<number>();
  const rejected = new Map<number, string>();
  const inFlight = new Set<Promise<void>>();
  let bounce: Promise<void> | undefined;
  let issuedWhileDown = 0;
  try {
    for (let seq = 0; seq < TOTAL; seq++) {
      if (seq === STOP_AT) bounce = bounceBroker();
      if (seq === HOLD_AT) await waitFor('the publisher to lose its connection', () => (publisher.connected ? undefined : true), 60_000);
      while (inFlight.size >= CONCURRENCY) await Promise.race(inFlight);
      if (!publisher.connected) issuedWhileDown += 1;
      const cast: Promise<void> = client
        .cast('echoCast', echo(seq))
        .then(
          () => {
            confirmed.add(seq);
          },
          (err: BusError) => {
            rejected.set(seq, `${err.code}: ${err.message}`);
          },
        )
        .finally(() => inFlight.delete(cast));
      inFlight.add(cast);
    }
    await Promise.all(inFlight);
  } finally {
    await bounce;
  }

  // Every cast waited out the outage (90 s deadline), so every one was confirmed.
  expect([...rejected.entries()].slice(0, 5)).toEqual([]);
  expect(confirmed.size).toBe(TOTAL);
  await waitFor('every confirmed cast to be consumed', () => ([...confirmed].every((seq) => consumed.has(seq)) ? true : undefined), 90_000);
  const duplicates = [...consumed.values()].reduce((sum, n) => sum + n - 1, 0);
  console.log(
    `broker restart: ${confirmed.size} confirmed, ${consumed.size} distinct consumed, ${duplicates} duplicates, ${issuedWhileDown} issued while disconnected, ` +
      `reconnects publisher=${publisher.reconnects} consumer=${consumer.reconnects}`,
  );
  expect(issuedWhileDown).toBeGreaterThan(0);
  expect(publisher.reconnects).toBeGreaterThanOrEqual(1);
  expect(consumer.reconnects).toBeGreaterThanOrEqual(1);
  // Connected again, by themselves (the broker may drop a connection made while it was still starting: wait, bounded).
  await waitFor('both buses to be connected', () => (publisher.connected && consumer.connected ? true : undefined), 30_000);

  await Promise.all(poolServers.map((server, i) => client.cast('echoCast', echo(i), { server })));
  await waitFor('the pool to consume its casts', () => (poolSeen.length >= poolServers.length ? true : undefined), 30_000);
  expect([...poolSeen].sort()).toEqual([...poolServers].sort());
});
