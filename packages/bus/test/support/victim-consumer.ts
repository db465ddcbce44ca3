// A consumer process that takes casts and never acks them: the parent test SIGKILLs it
// mid-handler to prove the broker redelivers to another consumer.
// Usage: node --import tsx victim-consumer.ts <amqp-url> <server> <maxDeliveries>
import { EchoServiceService } from '@cellsched/wire';
import pino from 'pino';
import { Bus } from '../../src';

async function main(): Promise<void> {
  const [url, server, maxDeliveries] = process.argv.slice(2);
  if (!url || !server || !maxDeliveries || !process.send)
    throw new Error('usage: victim-consumer <amqp-url> <server> <maxDeliveries> (with an IPC channel)');
  const send = process.send.bind(process);
  const bus = await Bus.connect({ url, logger: pino({ level: 'silent' }), name: 'victim' });
  await bus.serve(
    EchoServiceService,
    {
      echoCast: async (request, ctx) => {
        send({ kind: 'got', seq: request.seq, attempt: ctx.attempt });
        await new Promise<never>(() => undefined);
      },
    },
    { server, prefetch: 1, maxDeliveries: Number(maxDeliveries) },
  );
  send({ kind: 'ready' });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
