// Test harness for the cell-level services: a cell DB, a RabbitMQ vhost (the cell's bus), a
// real placement child process with its own database, the cell conductor in-process, and
// simulated computes (in-process, or as child processes that can be SIGKILLed).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Bus } from '@cellsched/bus';
import { CELL_DB_MIGRATIONS_DIR, createInstance, type InstanceRecord } from '@cellsched/cell-db';
import { testInfra } from '@cellsched/config';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { instanceConsumer, parseAllocationRequest, PlacementClient } from '@cellsched/placement-client';
import type { Flavor, Selection } from '@cellsched/wire';
import pino from 'pino';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const logger = pino({ level: 'silent' });
const run = promisify(execFile);

export async function rabbitmqctl(...args: string[]): Promise<string> {
  return (await run('rabbitmqctl', args, { timeout: 120_000 })).stdout;
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const addr = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return typeof addr === 'object' && addr !== null ? addr.port : 0;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Builds placement and the simulated compute for child processes (a no-op when dist is fresh). */
export function buildServices(): void {
  execFileSync(
    join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-b', join(ROOT, 'services', 'placement'), join(ROOT, 'services', 'simulated-compute')],
    { stdio: 'inherit' },
  );
}

/** A vhost with the admin user's permissions; `url` uses the admin credentials. */
export async function createVhost(prefix: string): Promise<{ name: string; url: string; dispose(): Promise<void> }> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const base = new URL(testInfra().amqpUrl);
  await rabbitmqctl('add_vhost', name);
  await rabbitmqctl('set_permissions', '-p', name, decodeURIComponent(base.username), '.*', '.*', '.*');
  base.pathname = `/${encodeURIComponent(name)}`;
  return {
    name,
    url: base.toString(),
    dispose: async () => {
      await rabbitmqctl('delete_vhost', name);
    },
  };
}

export interface PlacementProcess {
  restUrl: string;
  grpcAddress: string;
  db: TestDatabase;
  stop(): Promise<void>;
}

/** Starts the real placement service as a child process on free ports with its own database. */
export async function startPlacement(): Promise<PlacementProcess> {
  const db = await createTestDatabase({
    kind: 'placement',
    migrationsDir: join(ROOT, 'services', 'placement', 'migrations'),
    prefix: 'cc_placement',
  });
  const [port, grpcPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(ROOT, 'services', 'placement', 'dist', 'main.js')], {
    env: {
      CELLSCHED_PLACEMENT_DB_URL: db.url,
      CELLSCHED_PLACEMENT_PORT: String(port),
      CELLSCHED_PLACEMENT_GRPC_PORT: String(grpcPort),
      CELLSCHED_PLACEMENT_MIGRATE: 'false',
      CELLSCHED_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const restUrl = `http://127.0.0.1:${port}`;
  await waitFor('placement', async () => ((await fetch(restUrl)).ok ? true : undefined));
  return {
    restUrl,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    db,
    stop: async () => {
      await stopChild(child, 'SIGTERM');
      await db.drop();
    },
  };
}

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill(signal);
  });
}

/** A simulated compute child process; resolves once its control port is printed (hosts ready). */
export async function startComputeChild(env: Record<string, string>): Promise<{ child: ChildProcess; controlPort: number }> {
  const child = spawn(process.execPath, [join(ROOT, 'services', 'simulated-compute', 'dist', 'main.js')], {
    env: { CELLSCHED_LOG_LEVEL: 'warn', CELLSCHED_COMPUTE_CONTROL_PORT: '0', ...env },
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

export const FLAVOR: Flavor = {
  id: 0,
  flavorid: '1',
  name: 'm1.tiny',
  vcpus: 1,
  memoryMb: 512,
  rootGb: 1,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: {},
};

/** The Selection the scheduler would give for a host (allocation request for FLAVOR on its provider). */
export function selectionFor(host: string, nodeUuid: string, cellUuid: string): Selection {
  const json = JSON.stringify({
    allocations: { [nodeUuid]: { resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 } } },
    mappings: { '': [nodeUuid] },
  });
  return {
    computeNodeUuid: nodeUuid,
    serviceHost: host,
    nodename: host,
    cellUuid,
    availabilityZone: 'nova',
    allocationRequest: { json, version: '1.36' },
  };
}

/** What the super-conductor does before casting the build: claim the chosen host and create the instance. */
export async function superConductorStep(
  cellDb: TestDatabase,
  placement: PlacementClient,
  uuid: string,
  hostList: readonly Selection[],
): Promise<InstanceRecord> {
  const [chosen, ...alternates] = hostList;
  if (chosen === undefined) throw new Error('empty host list');
  const claim = await placement.claim(
    instanceConsumer({ uuid, projectId: 'p1', userId: 'u1' }, parseAllocationRequest(chosen.allocationRequest?.json ?? '')),
    { replace: true },
  );
  if (claim.kind !== 'claimed') throw new Error(`claim failed: ${claim.kind}`);
  const { instance } = await createInstance(cellDb.pool, {
    uuid,
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    vmState: 'building',
    taskState: 'scheduling',
    host: chosen.serviceHost,
    node: chosen.nodename,
    buildHostList: alternates,
  });
  return instance;
}

export async function createCellDb(): Promise<TestDatabase> {
  return createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'cc_cell' });
}

export { Bus };
