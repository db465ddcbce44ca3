// One request across the process's boundaries: a gRPC call whose handler casts on the bus,
// and the consumer of that cast. Run by trace.test.ts in a child process (OTel cannot
// patch modules inside a jest worker); it reads the span file and the log lines after.
import { trace } from '@opentelemetry/api';
import { Bus } from '@cellsched/bus';
import { bindService, createGrpcClient, currentRequestContext, startGrpcServer } from '@cellsched/grpc';
import { createLogger, requestLogger, shutdownTelemetry } from '../../..';
import { EchoServiceClient, EchoServiceService } from '@cellsched/wire';

/** The request id the demo sends; the test looks for it in spans and logs. */
const REQUEST_ID = 'req-trace-demo';

async function main(amqpUrl: string): Promise<void> {
  const logger = createLogger({ service: 'trace-demo', host: 'demo-host', cell: 'cell1', level: 'info' });
  const bus = await Bus.connect({ url: amqpUrl, logger, name: 'trace-demo', connectTimeoutMs: 10_000 });
  let consumed: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    consumed = resolve;
  });
  await bus.serve(
    EchoServiceService,
    {
      echoCast: (req, ctx) => {
        // The request id crossed the cast in the OTel baggage (no bus code involved).
        const requestId = currentRequestContext()?.requestId;
        requestLogger(logger, { requestId, instanceUuid: req.text, attempt: ctx.attempt }).info({ seq: req.seq }, 'cast consumed');
        consumed();
        return Promise.resolve();
      },
    },
    { server: 'trace-demo' },
  );
  const caster = bus.castClient(EchoServiceService);
  const server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [
      bindService(EchoServiceService, {
        echo: async (req, ctx) => {
          ctx.logger.info({ instance_uuid: req.text }, 'echo handled');
          await caster.cast('echoCast', { text: req.text, failTimes: 0, seq: 1 }, { server: 'trace-demo' });
          return { text: req.text, replica: 'demo' };
        },
        echoCast: () => Promise.resolve({}),
      }),
    ],
  });
  const client = createGrpcClient(EchoServiceClient, { addresses: [server.address], deadlineMs: 10_000 });
  try {
    await trace.getTracer('trace-demo').startActiveSpan('demo request', async (span) => {
      logger.info('calling echo');
      await client.echo({ text: 'instance-1', failWithCode: '', delayMs: 0 }, { requestId: REQUEST_ID });
      await done;
      span.end();
    });
    logger.info('demo done');
  } finally {
    client.close();
    await server.shutdown(2000);
    await bus.close(5000);
    await shutdownTelemetry();
  }
}

main(process.argv[3] ?? '').catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
