/**
 * One simulated-compute process, as a child process, against the real RabbitMQ and a real
 * placement (child process, own database): it serves hundreds of hosts from a bounded set
 * of queues, a cast to compute.<host> is built on exactly that host, and builds cast while
 * the process is dead wait in its queue and are built once it is back.
 * The test plays the cell conductor: it consumes the `conductor` queue of the vhost.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Bus } from '@cellsched/bus';
import { testInfra } from '@cellsched/config';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  BuildAndRunInstanceRequest,
  CellConductorServiceService,
  ComputeServiceService,
  type BuildInstancesRequest,
  type BuildSucceededRequest,
} from '@cellsched/wire';
import pino from 'pino';

const ROOT = join(__dirname, '..', '..', '..', '..');
const run = promisify(execFile);
const logger = pino({ level: 'silent' });
const HOSTS = 300;
const CELL = 'c1';

let vhost: { name: string; url: string };
let placementDb: TestDatabase;
let placement: ChildProcess;
let placementUrl: string;
let bus: Bus;
const succeeded: BuildSucceededRequest[] = [];
const rescheduled: BuildInstancesRequest[] = [];
const registered = new Set<string>();

async function rabbitmqctl(...args: string[]): Promise<string> {
  return (await run('rabbitmqctl', args, { timeout: 120_000 })).stdout;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const addr = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return typeof addr === 'object' && addr !== null ? addr.port : 0;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await Promise.resolve(probe()).catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stop(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill(signal);
  });
}

/** The compute as a child process; resolves with its control port once all its hosts are ready. */
async function startCompute(env: Record<string, string> = {}): Promise<{ child: ChildProcess; controlPort: number }> {
  const child = spawn(process.execPath, [join(ROOT, 'services', 'simulated-compute', 'dist', 'main.js')], {
    env: {
      CELLSCHED_LOG_LEVEL: 'warn',
      CELLSCHED_COMPUTE_CONTROL_PORT: '0',
      CELLSCHED_CELL_TRANSPORT_URL: vhost.url,
      CELLSCHED_PLACEMENT_URL: placementUrl,
      CELLSCHED_CELL_NAME: CELL,
      CELLSCHED_COMPUTE_HOSTS: String(HOSTS),
      CELLSCHED_COMPUTE_HOST_PREFIX: 'pool-',
      CELLSCHED_BUILD_LATENCY_MS: '20',
      CELLSCHED_COMPUTE_PLACEMENT_CONCURRENCY: '16',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const controlPort = await new Promise<number>((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /"controlPort":(\d+)/.exec(buf);
      if (m?.[1] !== undefined) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`compute exited with ${code}`)));
  });
  return { child, controlPort };
}

beforeAll(async () => {
  execFileSync(
    join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-b', join(ROOT, 'services', 'placement'), join(ROOT, 'services', 'simulated-compute')],
    { stdio: 'inherit' },
  );
  const name = `sctest-pool-${randomBytes(4).toString('hex')}`;
  const base = new URL(testInfra().amqpUrl);
  await rabbitmqctl('add_vhost', name);
  await rabbitmqctl('set_permissions', '-p', name, decodeURIComponent(base.username), '.*', '.*', '.*');
  base.pathname = `/${encodeURIComponent(name)}`;
  vhost = { name, url: base.toString() };
  placementDb = await createTestDatabase({
    kind: 'placement',
    migrationsDir: join(ROOT, 'services', 'placement', 'migrations'),
    prefix: 'sc_placement',
  });
  const [port, grpcPort] = [await freePort(), await freePort()];
  placement = spawn(process.execPath, [join(ROOT, 'services', 'placement', 'dist', 'main.js')], {
    env: {
      CELLSCHED_PLACEMENT_DB_URL: placementDb.url,
      CELLSCHED_PLACEMENT_PORT: String(port),
      CELLSCHED_PLACEMENT_GRPC_PORT: String(grpcPort),
      CELLSCHED_PLACEMENT_MIGRATE: 'false',
      CELLSCHED_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  placementUrl = `http://127.0.0.1:${port}`;
  await waitFor('placement', async () => ((await fetch(placementUrl)).ok ? true : undefined));
  bus = await Bus.connect({ url: vhost.url, logger, name: 'test-conductor' });
  await bus.serve(
    CellConductorServiceService,
    {
      reportComputeHosts: async (req) => {
        for (const h of req.hosts) registered.add(h.host);
      },
      serviceHeartbeats: async () => undefined,
      buildSucceeded: async (req) => {
        succeeded.push(req);
      },
      buildInstances: async (req) => {
        rescheduled.push(req);
      },
    },
    { prefetch: 64 },
  );
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await stop(placement, 'SIGTERM');
  await placementDb?.drop();
  if (vhost) await rabbitmqctl('delete_vhost', vhost.name);
});

async function queues(): Promise<Record<string, number>> {
  const out = await rabbitmqctl('list_queues', '-p', vhost.name, '--quiet', '--no-table-headers', 'name', 'messages');
  const rows = out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((r) => r.length === 2);
  return Object.fromEntries(rows.map(([n, m]) => [n as string, Number(m)]));
}

function build(host: string, uuid = randomUUID()): Promise<unknown> {
  const req = BuildAndRunInstanceRequest.fromPartial({
    instance: { uuid },
    attempt: 1,
    requestId: `req-${uuid}`,
    hostList: [{ serviceHost: host, nodename: host, computeNodeUuid: randomUUID(), cellUuid: randomUUID() }],
  });
  return bus
    .castClient(ComputeServiceService)
    .cast('buildAndRunInstance', req, { server: host })
    .then(() => uuid);
}

async function guests(controlPort: number): Promise<Record<string, string[]>> {
  return (await fetch(`http://127.0.0.1:${controlPort}/guests`)).json() as Promise<Record<string, string[]>>;
}

test(`${HOSTS} hosts in one process: a bounded set of queues, and each build runs on exactly the host it was cast to`, async () => {
  const compute = await startCompute();
  try {
    expect(registered.size).toBe(HOSTS);
    const pool = 'compute-pool.c1.pool-1';
    // Whatever the host count: the process's queue, its DLQ and its owner lock (plus the conductor's two).
    expect(Object.keys(await queues()).sort()).toEqual([pool, `${pool}.dlq`, `${pool}.owner`, 'conductor', 'conductor.dlq']);
    const providers = (await (
      await fetch(`${placementUrl}/resource_providers`, { headers: { 'x-auth-token': 'admin', 'OpenStack-API-Version': 'placement 1.36' } })
    ).json()) as { resource_providers: unknown[] };
    expect(providers.resource_providers).toHaveLength(HOSTS);

    const targets = ['pool-1', 'pool-2', 'pool-150', `pool-${HOSTS}`, 'pool-77', 'pool-2'];
    const uuids = (await Promise.all(targets.map((h) => build(h)))) as string[];
    await waitFor('every build to succeed', () => (uuids.every((u) => succeeded.some((s) => s.instanceUuid === u)) ? true : undefined));
    targets.forEach((host, i) => {
      expect(succeeded.filter((s) => s.instanceUuid === uuids[i]).map((s) => s.host)).toEqual([host]);
    });
    const running = await guests(compute.controlPort);
    expect(Object.keys(running).sort()).toEqual([...new Set(targets)].sort());
    targets.forEach((host, i) => {
      expect(running[host]).toContain(uuids[i]);
    });
    expect(Object.values(running).flat()).toHaveLength(targets.length);
  } finally {
    await stop(compute.child, 'SIGTERM');
  }
}, 180_000);

test('builds cast while the process is dead wait in its queue and run on their hosts once it is back', async () => {
  const first = await startCompute();
  await stop(first.child, 'SIGKILL');
  const targets = ['pool-3', 'pool-299', 'pool-3'];
  const uuids = (await Promise.all(targets.map((h) => build(h)))) as string[]; // accepted: the host's key stays bound
  // (the broker's message counts lag a few seconds behind)
  await waitFor('the builds to wait in the queue', async () =>
    (await queues())['compute-pool.c1.pool-1'] === targets.length ? true : undefined,
  );
  expect(uuids.some((u) => succeeded.some((s) => s.instanceUuid === u))).toBe(false);

  const second = await startCompute();
  try {
    await waitFor('the queued builds', () => (uuids.every((u) => succeeded.some((s) => s.instanceUuid === u)) ? true : undefined));
    targets.forEach((host, i) => {
      expect(succeeded.filter((s) => s.instanceUuid === uuids[i]).map((s) => s.host)).toEqual([host]);
    });
    expect(await guests(second.controlPort)).toEqual({ 'pool-3': [uuids[0], uuids[2]].sort(), 'pool-299': [uuids[1]] });
    await waitFor('the queue to be empty', async () => ((await queues())['compute-pool.c1.pool-1'] === 0 ? true : undefined));
  } finally {
    await stop(second.child, 'SIGTERM');
  }
}, 180_000);

test("restarted with fewer hosts: a build queued for a dropped host is reported to the conductor as that host's failure, not built or dead-lettered", async () => {
  const first = await startCompute();
  await stop(first.child, 'SIGKILL');
  const uuid = (await build(`pool-${HOSTS}`)) as string;
  const second = await startCompute({ CELLSCHED_COMPUTE_HOSTS: '10' });
  try {
    const report = await waitFor('the reschedule request', () => rescheduled.find((r) => r.instance?.uuid === uuid));
    expect(report).toMatchObject({
      failedHost: `pool-${HOSTS}`,
      attempt: 1,
      failure: { code: 'compute.host.not_served', retryable: true },
    });
    expect(report.failure?.message).toContain(`host pool-${HOSTS} is not served by any compute process`);
    expect(succeeded.some((s) => s.instanceUuid === uuid)).toBe(false);
    expect(await guests(second.controlPort)).toEqual({});
    expect((await queues())['compute-pool.c1.pool-1.dlq']).toBe(0);
    // The dropped host's key is unbound: a new cast to it is refused, as for a host nobody serves.
    await expect(build(`pool-${HOSTS}`)).rejects.toMatchObject({ code: 'bus.publish.unroutable' });
    await expect(build('pool-10')).resolves.toBeDefined();
  } finally {
    await stop(second.child, 'SIGTERM');
  }
}, 180_000);
