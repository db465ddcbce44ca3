// The story sampler in a real process (run by story.test.ts; OTel cannot patch modules inside
// jest): three pieces of work shaped like the services', each an HTTP request or a cast whose
// handler queries PostgreSQL, calls gRPC, casts on the bus, and whose consumer queries again:
//   POST /v2.1/servers   a create: its trace must be kept whole (database spans capped);
//   GET /v2.1/servers/x  a read: dropped whole;
//   a cast outside any request (a heartbeat): dropped whole.
import { createServer, type Server } from 'node:http';
import { Bus } from '@cellsched/bus';
import { createPool } from '@cellsched/db';
import { bindService, createGrpcClient, startGrpcServer } from '@cellsched/grpc';
import { EchoServiceClient, EchoServiceService } from '@cellsched/wire';
import { annotateSpan, createLogger, shutdownTelemetry } from '../../..';

async function main(amqpUrl: string, pgUrl: string, serverUuid: string): Promise<void> {
  const logger = createLogger({ service: 'story-demo', host: 'demo-host', level: 'info' });
  const pool = createPool({ url: pgUrl, max: 2 });
  const bus = await Bus.connect({ url: amqpUrl, logger, name: 'story-demo', connectTimeoutMs: 10_000 });
  const consumed = new Map<string, () => void>();
  const done = (text: string) => new Promise<void>((resolve) => consumed.set(text, resolve));
  await bus.serve(
    EchoServiceService,
    {
      echoCast: async (req) => {
        await pool.query('SELECT 1 AS consumer');
        logger.info({ work: req.text }, 'cast consumed');
        consumed.get(req.text)?.();
      },
    },
    { server: 'story-demo' },
  );
  const caster = bus.castClient(EchoServiceService);
  const grpc = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [
      bindService(EchoServiceService, {
        echo: async (req) => {
          await pool.query('SELECT 2 AS handler');
          await pool.query('SELECT 3 AS handler');
          await caster.cast('echoCast', { text: req.text, failTimes: 0, seq: 1 }, { server: 'story-demo' });
          return { text: req.text, replica: 'demo' };
        },
        echoCast: () => Promise.resolve({}),
      }),
    ],
  });
  const client = createGrpcClient(EchoServiceClient, { addresses: [grpc.address], deadlineMs: 10_000 });
  const http = await listen(async (method, path) => {
    if (method === 'POST') annotateSpan({ 'cellsched.instance_uuids': serverUuid }); // as the api does
    await client.echo({ text: `${method} ${path}`, failWithCode: '', delayMs: 0 }, {});
  });
  try {
    for (const [method, path] of [
      ['POST', '/v2.1/servers'],
      ['GET', '/v2.1/servers/x'],
    ] as const) {
      const consumedNow = done(`${method} ${path}`);
      const res = await fetch(`${http.url}${path}`, { method });
      if (res.status !== 202) throw new Error(`${method} ${path}: ${res.status}`);
      await consumedNow;
    }
    const heartbeat = done('heartbeat');
    await caster.cast('echoCast', { text: 'heartbeat', failTimes: 0, seq: 2 }, { server: 'story-demo' });
    await heartbeat;
  } finally {
    client.close();
    http.server.close();
    await grpc.shutdown(2000);
    await bus.close(5000);
    await pool.end();
    await shutdownTelemetry();
  }
}

/** A plain node HTTP server (instrumented like the services'): every request runs `work`, then 202. */
function listen(work: (method: string, path: string) => Promise<void>): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    work(req.method ?? 'GET', req.url ?? '/').then(
      () => res.writeHead(202).end(),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` });
    }),
  );
}

main(process.argv[3] ?? '', process.argv[4] ?? '', process.argv[5] ?? '').catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
