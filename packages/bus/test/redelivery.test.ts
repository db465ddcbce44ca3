// A consumer process killed (SIGKILL) before it acked: the broker redelivers the cast to
// another consumer, which sees it as attempt 2.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { EchoServiceService } from '@cellsched/wire';
import { Bus } from '../src';
import { createVhost, Inspector, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo, echoHandler, type Seen } from './support/echo';

interface ChildMessage { kind: 'ready' | 'got'; seq?: number; attempt?: number }

let vhost: TestVhost;
let bus: Bus | undefined;
let child: ChildProcess | undefined;

beforeAll(async () => {
  vhost = await createVhost('bus-redeliver');
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await bus?.close();
  await vhost?.dispose();
});

function startVictim(url: string, messages: ChildMessage[]): ChildProcess {
  const root = join(__dirname, '../../..');
  return fork(join(__dirname, 'support/victim-consumer.ts'), [url, 'victim'], {
    cwd: root, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  }).on('message', (m) => messages.push(m as ChildMessage));
}

it('redelivers to another consumer the cast a killed consumer never acked', async () => {
  const fromChild: ChildMessage[] = [];
  child = startVictim(vhost.url, fromChild);
  await waitFor('the victim to subscribe', () => fromChild.find((m) => m.kind === 'ready'), 30_000);

  bus = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'survivor' });
  await bus.castClient(EchoServiceService).cast('echoCast', echo(42), { server: 'victim' });
  expect(await waitFor('the victim to take it', () => fromChild.find((m) => m.kind === 'got'))).toEqual({ kind: 'got', seq: 42, attempt: 1 });

  const seen: Seen[] = [];
  await bus.serve(EchoServiceService, { echoCast: echoHandler(seen) }, { server: 'victim' });
  const exited = new Promise((resolve) => child!.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;

  await waitFor('the redelivery', () => seen[0]);
  expect(seen).toHaveLength(1);
  expect(seen[0]!.request.seq).toBe(42);
  expect(seen[0]!.ctx.attempt).toBe(2);
  const inspector = await Inspector.open(vhost.url);
  try {
    await waitFor('the ack', async () => ((await inspector.count('echo.victim')) === 0 ? true : undefined));
    expect(await inspector.count('echo.victim.dlq')).toBe(0);
  } finally {
    await inspector.close();
  }
});
