import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import { IMAGE, Stack, waitFor } from './harness';

// Casts the broker cannot deliver, hop by hop, against the real processes (issue 12): a cast
// that cannot be delivered is a failure of that host for that request, never a silent end.
// One cell of 3 hosts, one scheduler, max_attempts 3 (2 alternates), no injected build failure.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2ecast${SEED}`, 4100 + (SEED % 100));
const CANDIDATE_TTL_MS = 1000;
const CELL = 'cell1';
const HOSTS = ['cell1-compute-1', 'cell1-compute-2', 'cell1-compute-3'];

interface Server {
  id: string;
  status: string;
  fault?: { message: string; details?: string };
  'OS-EXT-SRV-ATTR:host': string | null;
}
interface Event {
  event: string;
  host: string | null;
  result: string | null;
  details?: string | null;
}

beforeAll(() => {
  console.log(`e2e refused casts: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '1', '--hosts-per-cell', '3', '--schedulers', '1', '--build-latency-ms', '50'], {
    CELLSCHED_SCHEDULER_CANDIDATE_CACHE_TTL: `${CANDIDATE_TTL_MS}ms`,
    CELLSCHED_WATCHDOG_INTERVAL_MS: '2000',
  });
}, 400_000);

afterAll(() => stack.down(), 120_000);

async function createServer(name: string): Promise<string> {
  const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
    server: { name, flavorRef: '1', imageRef: IMAGE, networks: 'none' },
  });
  expect(r.status).toBe(202);
  return r.body.server.id;
}

async function settled(id: string, timeoutMs = 90_000): Promise<Server> {
  return waitFor(
    `server ${id} to settle`,
    async () => {
      const r = await stack.api<{ server: Server }>('GET', `/servers/${id}`);
      return ['ACTIVE', 'ERROR'].includes(r.body.server.status) ? r.body.server : undefined;
    },
    timeoutMs,
  );
}

/** The build events of a server's create action, read from its cell (the API shows no event details before 2.84). */
async function events(id: string): Promise<Event[]> {
  const dbUrl = stack.topology().cells.find((c) => c.name === CELL)?.dbUrl ?? '';
  return stack.query<Event>(
    dbUrl,
    `SELECT e.event, e.host, e.result, e.details FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
    WHERE a.instance_uuid = $1 AND a.action = 'create' ORDER BY e.id`,
    [id],
  );
}

/** The queue the cell's compute process consumes (from its ready log line). */
function poolQueue(): string {
  const line = readFileSync(stack.logFile(`compute-${CELL}`), 'utf8')
    .split('\n')
    .reverse()
    .find((l) => l.includes('"simulated compute ready"'));
  const queue = line === undefined ? undefined : (JSON.parse(line) as { queue?: string }).queue;
  if (queue === undefined) throw new Error('no queue in the compute log');
  return queue;
}

/** Runs `fn` on a channel of the cell's vhost, with the cell's own credentials. */
async function onCellBus(fn: (ch: amqp.Channel) => Promise<unknown>): Promise<void> {
  const url = stack.topology().cells.find((c) => c.name === CELL)?.transportUrl ?? '';
  const conn = await amqp.connect(url);
  try {
    await fn(await conn.createChannel());
  } finally {
    await conn.close();
  }
}

async function setService(host: string, status: 'enabled' | 'disabled'): Promise<void> {
  const { services } = (
    await stack.api<{ services: { id: string; host: string }[] }>('GET', `/os-services?binary=nova-compute&host=${host}`)
  ).body;
  const r = await stack.api(
    'PUT',
    `/os-services/${services[0]?.id ?? ''}`,
    status === 'disabled' ? { status, disabled_reason: 'e2e' } : { status },
  );
  expect(r.status).toBe(200);
}

test('build casts refused by the broker (super-conductor -> compute, then cell conductor -> compute) move the build on to the alternate that is served', async () => {
  const [served, refusedA, refusedB] = HOSTS as [string, string, string];
  // One server on `served` first, so that the spread weighers put it last: the two others are chosen first.
  await setService(refusedA, 'disabled');
  await setService(refusedB, 'disabled');
  await new Promise((r) => setTimeout(r, 3000 + CANDIDATE_TTL_MS));
  const first = await settled(await createServer('weight'));
  expect(first['OS-EXT-SRV-ATTR:host']).toBe(served);
  await setService(refusedA, 'enabled');
  await setService(refusedB, 'enabled');
  await new Promise((r) => setTimeout(r, 3000 + CANDIDATE_TTL_MS));
  // Nobody serves the two hosts any more, while their services still look alive: the broker refuses their casts.
  await onCellBus(async (ch) => {
    for (const h of [refusedA, refusedB]) await ch.unbindQueue(poolQueue(), 'cellsched', `compute.${h}`);
  });
  const id = await createServer('refused');
  const server = await settled(id);
  expect(server.status).toBe('ACTIVE');
  expect(server['OS-EXT-SRV-ATTR:host']).toBe(served);
  const evs = await events(id);
  const refused = evs.filter((e) => e.event === 'compute__do_build_and_run_instance' && e.result === 'Error');
  expect(refused.map((e) => e.host).sort()).toEqual([refusedA, refusedB].sort());
  for (const e of refused) expect(e.details ?? '').toContain(`no compute serves host ${e.host ?? ''}`);
  expect(evs.some((e) => e.event === 'compute__do_build_and_run_instance' && e.host === served && e.result === 'Success')).toBe(true);
  // placement holds the server's resources on the served host only
  const allocations = await stack.allocationsByConsumer();
  expect([...(allocations.get(id)?.keys() ?? [])]).toEqual([served]);
  await onCellBus(async (ch) => {
    for (const h of [refusedA, refusedB]) await ch.bindQueue(poolQueue(), 'cellsched', `compute.${h}`);
  });
});

test('a build result the broker refuses (compute -> cell conductor, no conductor queue) is reported again once the conductor is back', async () => {
  stack.kill(`cell-conductor-${CELL}`);
  await onCellBus((ch) => ch.deleteQueue('conductor'));
  const id = await createServer('no-conductor');
  await new Promise((r) => setTimeout(r, 3000)); // built on its host; the report finds no queue
  stack.start(`cell-conductor-${CELL}`);
  const server = await settled(id);
  expect(server.status).toBe('ACTIVE');
  const guests = await stack.guests();
  expect(guests.get(id)).toEqual([server['OS-EXT-SRV-ATTR:host']]);
});

test('a create cast the broker refuses (api -> super-conductor, no conductor queue on the API bus) is sent again and built once the super-conductor is back', async () => {
  stack.kill('super-conductor');
  const conn = await amqp.connect(stack.apiTransportUrl());
  try {
    await (await conn.createChannel()).deleteQueue('conductor');
  } finally {
    await conn.close();
  }
  const id = await createServer('no-super-conductor');
  await new Promise((r) => setTimeout(r, 2000));
  expect((await stack.api<{ server: Server }>('GET', `/servers/${id}`)).body.server.status).toBe('BUILD');
  stack.start('super-conductor');
  const server = await settled(id);
  expect(server.status).toBe('ACTIVE');
});
