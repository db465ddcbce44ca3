// A consumer process killed (SIGKILL) before it acked: the broker redelivers the cast to
// another consumer, which sees it as attempt 2; past maxDeliveries such a cast (one that
// keeps killing its consumers) is dead-lettered with `bus.delivery.limit_exceeded`.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { EchoServiceService } from '@cellsched/wire';
import { Bus, BUS_ERROR, HEADER } from '../src';
import { createVhost, Inspector, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo, echoHandler, type Seen } from './support/echo';

interface ChildMessage {
  kind: 'ready' | 'got';
  seq?: number;
  attempt?: number;
}

let vhost: TestVhost;
let bus: Bus | undefined;
let child: ChildProcess | undefined;
let inspector: Inspector;

beforeAll(async () => {
  vhost = await createVhost('bus-redeliver');
  inspector = await Inspector.open(vhost.url);
  bus = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'survivor' });
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await bus?.close();
  await inspector?.close();
  await vhost?.dispose();
});

function startVictim(server: string, maxDeliveries: number, messages: ChildMessage[]): ChildProcess {
  const root = join(__dirname, '../../..');
  return fork(join(__dirname, 'support/victim-consumer.ts'), [vhost.url, server, String(maxDeliveries)], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  }).on('message', (m) => messages.push(m as ChildMessage));
}

it('redelivers to another consumer the cast a killed consumer never acked', async () => {
  const fromChild: ChildMessage[] = [];
  child = startVictim('victim', 5, fromChild);
  await waitFor('the victim to subscribe', () => fromChild.find((m) => m.kind === 'ready'), 30_000);

  await bus!.castClient(EchoServiceService).cast('echoCast', echo(42), { server: 'victim' });
  expect(await waitFor('the victim to take it', () => fromChild.find((m) => m.kind === 'got'))).toEqual({
    kind: 'got',
    seq: 42,
    attempt: 1,
  });

  const seen: Seen[] = [];
  await bus!.serve(EchoServiceService, { echoCast: echoHandler(seen) }, { server: 'victim' });
  await killChild();

  await waitFor('the redelivery', () => seen[0]);
  expect(seen).toHaveLength(1);
  expect(seen[0]!.request.seq).toBe(42);
  expect(seen[0]!.ctx.attempt).toBe(2);
  await waitFor('the ack', async () => ((await inspector.count('echo.victim')) === 0 ? true : undefined));
  expect(await inspector.count('echo.victim.dlq')).toBe(0);
});

it('dead-letters a cast whose consumers keep dying once it exceeds maxDeliveries', async () => {
  const fromChild: ChildMessage[] = [];
  child = startVictim('fragile', 1, fromChild);
  await waitFor('the victim to subscribe', () => fromChild.find((m) => m.kind === 'ready'), 30_000);
  await bus!.castClient(EchoServiceService).cast('echoCast', echo(7), { server: 'fragile' });
  await waitFor('the victim to take it', () => fromChild.find((m) => m.kind === 'got'));
  const seen: Seen[] = [];
  await bus!.serve(EchoServiceService, { echoCast: echoHandler(seen) }, { server: 'fragile', maxDeliveries: 1 });
  await killChild();

  const dead = await inspector.take('echo.fragile.dlq');
  expect(dead.properties.headers?.[HEADER.dlqCode]).toBe(BUS_ERROR.deliveryLimit);
  expect(dead.properties.headers?.[HEADER.dlqAttempts]).toBe(2);
  expect(seen).toHaveLength(0);
});

async function killChild(): Promise<void> {
  const victim = child!;
  const exited = new Promise((resolve) => victim.once('exit', resolve));
  victim.kill('SIGKILL');
  await exited;
}
