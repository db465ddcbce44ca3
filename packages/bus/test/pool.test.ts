// Server pools: one queue bound to many `<topic>.<server>` keys (a process simulating many
// hosts). Each cast still reaches exactly its server; the queue has one owner; a cast for a
// server the pool no longer serves is forwarded to whoever serves it now, or dead-lettered.
import { EchoServiceService } from '@cellsched/wire';
import { Bus, BUS_ERROR, HEADER } from '../src';
import { createVhost, Inspector, rabbitmqctl, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo, echoHandler, FAST_RETRY, type Seen } from './support/echo';

let vhost: TestVhost;
let bus: Bus;
let inspector: Inspector;

beforeAll(async () => {
  vhost = await createVhost('bus-pool');
  bus = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'pool-test' });
  inspector = await Inspector.open(vhost.url);
});

afterAll(async () => {
  await bus?.close();
  await inspector?.close();
  await vhost?.dispose();
});

async function queueNames(): Promise<string[]> {
  const out = await rabbitmqctl('list_queues', '-p', vhost.name, '--quiet', '--no-table-headers', 'name');
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .sort();
}

const servers = (n: number, prefix = 'h'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

it('serves 300 servers from one queue (plus its DLQ and owner lock); each cast reaches exactly its server', async () => {
  const seen: Seen[] = [];
  const sub = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler(seen) },
    { servers: servers(300), queue: 'echo-pool.a', prefetch: 64 },
  );
  expect(sub.queue).toBe('echo-pool.a');
  expect(await queueNames()).toEqual(['echo-pool.a', 'echo-pool.a.dlq', 'echo-pool.a.owner']);
  const client = bus.castClient(EchoServiceService);
  const targets = [1, 2, 150, 299, 300, 2, 150];
  await Promise.all(targets.map((n, seq) => client.cast('echoCast', echo(seq, 0, `for h${n}`), { server: `h${n}` })));
  await waitFor('every cast', () => (seen.length >= targets.length ? true : undefined));
  await new Promise((r) => setTimeout(r, 200)); // nothing more arrives
  expect(seen).toHaveLength(targets.length);
  for (const s of seen) {
    expect(s.ctx.server).toBe(s.request.text.slice('for '.length));
    expect(s.ctx.routingKey).toBe(`echo.${s.ctx.server}`);
  }
  expect(seen.map((s) => s.request.seq).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  await expect(client.cast('echoCast', echo(9), { server: 'h301' })).rejects.toMatchObject({ code: BUS_ERROR.publishUnroutable });
  await sub.close();
});

it('a second connection cannot serve the same pool queue while the first owns it; it can after the owner closes', async () => {
  const first = await bus.serve(EchoServiceService, { echoCast: echoHandler([]) }, { servers: ['o1'], queue: 'echo-pool.owned' });
  const other = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'pool-intruder' });
  try {
    await expect(
      other.serve(EchoServiceService, { echoCast: echoHandler([]) }, { servers: ['o2'], queue: 'echo-pool.owned' }),
    ).rejects.toMatchObject({ code: BUS_ERROR.queueLocked });
    await first.close();
    const seen: Seen[] = [];
    const second = await other.serve(
      EchoServiceService,
      { echoCast: echoHandler(seen) },
      { servers: ['o1', 'o2'], queue: 'echo-pool.owned' },
    );
    await bus.castClient(EchoServiceService).cast('echoCast', echo(1), { server: 'o2' });
    await waitFor('the new owner to get it', () => seen[0]);
    expect(seen[0]?.ctx.server).toBe('o2');
    await second.close();
  } finally {
    await other.close();
  }
});

it('casts for a server whose pool is down wait in the queue and are delivered when it is back', async () => {
  const sub = await bus.serve(EchoServiceService, { echoCast: echoHandler([]) }, { servers: ['w1', 'w2'], queue: 'echo-pool.wait' });
  await sub.close();
  const client = bus.castClient(EchoServiceService);
  await client.cast('echoCast', echo(1), { server: 'w2' });
  await client.cast('echoCast', echo(2), { server: 'w1' });
  expect(await inspector.count('echo-pool.wait')).toBe(2);
  const seen: Seen[] = [];
  const back = await bus.serve(EchoServiceService, { echoCast: echoHandler(seen) }, { servers: ['w1', 'w2'], queue: 'echo-pool.wait' });
  await waitFor('both', () => (seen.length === 2 ? true : undefined));
  expect(seen.map((s) => [s.request.seq, s.ctx.server])).toEqual([
    [1, 'w2'],
    [2, 'w1'],
  ]);
  await back.close();
});

it('restarted with fewer servers: a queued cast for a dropped server goes to its new queue, or to the DLQ; the key is unbound', async () => {
  const client = bus.castClient(EchoServiceService);
  const old = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler([]) },
    { servers: ['s1', 's2', 's3'], queue: 'echo-pool.shrink' },
  );
  await old.close();
  // Casts for s2 and s3 wait in the pool queue; then s2 moves to a queue of its own and s3 goes away.
  await client.cast('echoCast', echo(2, 0, 'moved'), { server: 's2' });
  await client.cast('echoCast', echo(3, 0, 'gone'), { server: 's3' });
  const movedSeen: Seen[] = [];
  const moved = await bus.serve(EchoServiceService, { echoCast: echoHandler(movedSeen) }, { server: 's2' });
  const poolSeen: Seen[] = [];
  const shrunk = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler(poolSeen) },
    { servers: ['s1'], queue: 'echo-pool.shrink', retryBackoff: FAST_RETRY },
  );

  const dead = await inspector.take('echo-pool.shrink.dlq');
  expect(dead.properties.headers?.[HEADER.dlqCode]).toBe(BUS_ERROR.serverNotServed);
  expect(dead.properties.headers?.[HEADER.dlqRoutingKey]).toBe('echo.s3');
  await waitFor('the forwarded s2 cast', () => movedSeen[0]);
  expect(movedSeen[0]?.request.seq).toBe(2);
  expect(movedSeen[0]?.ctx.headers[HEADER.forwardedFrom]?.toString()).toBe('echo-pool.shrink');
  await waitFor('the pool queue to be empty', async () => ((await inspector.count('echo-pool.shrink')) === 0 ? true : undefined));

  // Both keys are unbound from the pool: s2's casts reach only its own queue, s3's nowhere.
  await client.cast('echoCast', echo(4), { server: 's2' });
  await waitFor('the next s2 cast', () => movedSeen[1]);
  await expect(client.cast('echoCast', echo(5), { server: 's3' })).rejects.toMatchObject({ code: BUS_ERROR.publishUnroutable });
  await new Promise((r) => setTimeout(r, 200));
  expect(movedSeen).toHaveLength(2);
  expect(poolSeen).toHaveLength(0);
  expect(await inspector.count('echo-pool.shrink')).toBe(0);
  await shrunk.close();
  await moved.close();
});

it('restarted with fewer servers and a notServed handler: a queued cast for a dropped server goes to that handler, not the DLQ', async () => {
  const client = bus.castClient(EchoServiceService);
  const old = await bus.serve(EchoServiceService, { echoCast: echoHandler([]) }, { servers: ['n1', 'n2'], queue: 'echo-pool.notserved' });
  await old.close();
  await client.cast('echoCast', echo(7, 0, 'for a host that is gone'), { server: 'n2' });
  const served: Seen[] = [];
  const reported: Seen[] = [];
  let failOnce = true;
  const shrunk = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler(served) },
    {
      servers: ['n1'],
      queue: 'echo-pool.notserved',
      retryBackoff: FAST_RETRY,
      notServed: {
        echoCast: async (request, ctx) => {
          // a failing report is retried like any handler (requeued, then back through the stray path)
          if (failOnce) {
            failOnce = false;
            throw new Error('conductor unreachable');
          }
          reported.push({ request, ctx });
          return Promise.resolve();
        },
      },
    },
  );
  await waitFor('the report of the dropped server', () => reported[0]);
  expect(reported[0]?.ctx.server).toBe('n2');
  expect(reported[0]?.request.seq).toBe(7);
  await waitFor('the pool queue to be empty', async () => ((await inspector.count('echo-pool.notserved')) === 0 ? true : undefined));
  expect(await inspector.count('echo-pool.notserved.dlq')).toBe(0);
  expect(served).toHaveLength(0);
  await expect(client.cast('echoCast', echo(8), { server: 'n2' })).rejects.toMatchObject({ code: BUS_ERROR.publishUnroutable });
  await shrunk.close();
  await expect(
    bus.serve(EchoServiceService, { echoCast: echoHandler([]) }, { server: 'x', notServed: { echoCast: echoHandler([]) } }),
  ).rejects.toMatchObject({ code: BUS_ERROR.invalidArgument });
});

it('a pool dead-letters a failing cast into <queue>.dlq with the routing key it was sent with', async () => {
  const sub = await bus.serve(
    EchoServiceService,
    { echoCast: echoHandler([]) },
    { servers: ['d1', 'd2'], queue: 'echo-pool.dlq-test', maxDeliveries: 2, retryBackoff: FAST_RETRY },
  );
  await bus.castClient(EchoServiceService).cast('echoCast', echo(1, -1), { server: 'd2' });
  const dead = await inspector.take('echo-pool.dlq-test.dlq');
  expect(dead.properties.headers?.[HEADER.dlqCode]).toBe('echo.induced_failure');
  expect(dead.properties.headers?.[HEADER.dlqRoutingKey]).toBe('echo.d2');
  expect(dead.properties.headers?.[HEADER.dlqQueue]).toBe('echo-pool.dlq-test');
  await sub.close();
});

it('rejects bad pool options and changes nothing', async () => {
  const h = { echoCast: echoHandler([]) };
  await expect(bus.serve(EchoServiceService, h, { servers: [], queue: 'echo-pool.bad' })).rejects.toMatchObject({
    code: BUS_ERROR.invalidArgument,
  });
  await expect(bus.serve(EchoServiceService, h, { servers: ['a', 'a'], queue: 'echo-pool.bad' })).rejects.toMatchObject({
    code: BUS_ERROR.invalidArgument,
  });
  await expect(bus.serve(EchoServiceService, h, { servers: ['a'] })).rejects.toMatchObject({ code: BUS_ERROR.invalidArgument });
  await expect(bus.serve(EchoServiceService, h, { servers: ['a'], queue: 'echo-pool.bad', server: 'b' })).rejects.toMatchObject({
    code: BUS_ERROR.invalidArgument,
  });
  await expect(bus.serve(EchoServiceService, h, { servers: ['a#'], queue: 'echo-pool.bad' })).rejects.toMatchObject({
    code: BUS_ERROR.invalidArgument,
  });
  await expect(bus.serve(EchoServiceService, h, { queue: 'echo-pool.bad' })).rejects.toMatchObject({ code: BUS_ERROR.invalidArgument });
  expect((await queueNames()).filter((q) => q.startsWith('echo-pool.bad'))).toEqual([]);
});
