/**
 * The benchmark's cloud: throwaway databases (placement, API, cell0, two cells), placement and
 * scheduler replicas as separate processes (the built dist/), hosts seeded with set-based SQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { API_DB_MIGRATIONS_DIR, createCellMapping } from '../../../packages/api-db/src/index';
import { CELL_DB_MIGRATIONS_DIR } from '../../../packages/cell-db/src/index';
import { createTestDatabase, type TestDatabase } from '../../../packages/db/src/index';
import { type HostSpec, seedHosts } from './seed';

const ROOT = join(__dirname, '../../..');

/** True when nothing listens on 127.0.0.1:port and we may bind it. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

// NOTE: CELLSCHED_BENCH_PORT_BASE=N takes ports from N upwards (a range agreed on a shared
// machine); without it the OS picks free ephemeral ports.
let nextPort = Number(process.env.CELLSCHED_BENCH_PORT_BASE ?? 0);

/** A free TCP port on 127.0.0.1 (`count` consecutive ones when asked). */
export async function freePort(count = 1): Promise<number> {
  if (nextPort > 0) {
    for (;;) {
      const base = nextPort;
      nextPort += count;
      if (nextPort > 65535) throw new Error('CELLSCHED_BENCH_PORT_BASE: no free port left above the base');
      const free = await Promise.all(Array.from({ length: count }, (_, i) => portIsFree(base + i)));
      if (free.every(Boolean)) return base;
    }
  }
  for (;;) {
    const base = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const a = s.address();
        s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
      });
    });
    if (count === 1 || base + count < 65535) return base;
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** Spawns a node service (logs at warn, passed through) and resolves once `port` accepts connections (rejects on exit or after 120 s). */
async function startProcess(name: string, script: string, env: Record<string, string>, port: number): Promise<ChildProcess> {
  // NOTE: CELLSCHED_BENCH_CPU_PROF=DIR writes a V8 CPU profile of every child (placement, replicas) into DIR.
  const prof = process.env.CELLSCHED_BENCH_CPU_PROF;
  const flags =
    prof === undefined || prof === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`];
  // NOTE: CELLSCHED_BENCH_NODE_FLAGS adds node/V8 flags to every child (e.g. --trace-deopt, which NODE_OPTIONS refuses).
  flags.push(...(process.env.CELLSCHED_BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== ''));
  const child = spawn(process.execPath, [...flags, join(ROOT, script)], {
    env: { ...process.env, CELLSCHED_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (stream !== null)
      createInterface({ input: stream }).on('line', (line) => {
        // NOTE: expected failures (capacity, NoValidHost) log at warn; only errors and non-JSON output are shown.
        if (!line.startsWith('{') || /"level":(50|60)/.test(line)) process.stderr.write(`[${name}] ${line.slice(0, 400)}\n`);
      });
  }
  const deadline = Date.now() + 120_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`${name} did not start in 120 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** One cloud: databases, a placement process, hosts; replicas come and go. */
export class BenchCloud {
  private replicas: ChildProcess[] = [];
  private placementProcess: ChildProcess | undefined;
  private heartbeats: NodeJS.Timeout | undefined;
  placementGrpc = '';

  /** Process ids of placement and the running replicas (CPU accounting of `--stages`). */
  get pids(): { placement: number | undefined; replicas: number[] } {
    return { placement: this.placementProcess?.pid, replicas: this.replicas.flatMap((r) => (r.pid === undefined ? [] : [r.pid])) };
  }

  private constructor(
    readonly placementDb: TestDatabase,
    readonly apiDb: TestDatabase,
    readonly cell0: TestDatabase,
    readonly cells: readonly { uuid: string; db: TestDatabase }[],
  ) {}

  static async create(): Promise<BenchCloud> {
    const placementDb = await createTestDatabase({
      kind: 'placement',
      migrationsDir: join(ROOT, 'services/placement/migrations'),
      prefix: 'bench_sched_pl',
      poolMax: 4,
    });
    const apiDb = await createTestDatabase({ kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, prefix: 'bench_sched_api', poolMax: 2 });
    const cell0 = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'bench_sched_c0', poolMax: 1 });
    const cells = await Promise.all(
      [1, 2].map(async (i) => ({
        uuid: randomUUID(),
        db: await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: `bench_sched_c${i}`, poolMax: 4 }),
      })),
    );
    const cloud = new BenchCloud(placementDb, apiDb, cell0, cells);
    try {
      // the replicas read the cells from the API DB's cell mappings, as Nova's scheduler does
      for (const [i, c] of cells.entries()) {
        await createCellMapping(apiDb.pool, {
          uuid: c.uuid,
          name: `cell${i + 1}`,
          transportUrl: `amqp://127.0.0.1:5672/bench-cell${i + 1}`,
          databaseConnection: c.db.url,
        });
      }
      const port = await freePort(2);
      cloud.placementGrpc = `127.0.0.1:${port + 1}`;
      cloud.placementProcess = await startProcess(
        'placement',
        'services/placement/dist/main.js',
        {
          CELLSCHED_PLACEMENT_DB_URL: placementDb.url,
          CELLSCHED_PLACEMENT_PORT: String(port),
          CELLSCHED_PLACEMENT_GRPC_PORT: String(port + 1),
          CELLSCHED_PLACEMENT_MIGRATE: 'false',
        },
        port + 1,
      );
    } catch (err) {
      await cloud.close(); // NOTE: no throwaway database outlives a failed start
      throw err;
    }
    return cloud;
  }

  /**
   * Seeds hosts into the cells and placement, and from then on reports every compute service's
   * heartbeat each 10 s (Nova's report_interval with the DB servicegroup driver), so hosts stay
   * "up" past service_down_time and the scheduler's cache sees a realistic stream of changes.
   */
  async addHosts(specs: readonly HostSpec[]): Promise<void> {
    await seedHosts(
      this.cells.map((c) => c.db.pool),
      this.placementDb.pool,
      specs,
      { db: this.apiDb.pool, cellUuids: this.cells.map((c) => c.uuid) },
    );
    this.heartbeats ??= setInterval(() => {
      for (const c of this.cells) {
        c.db.pool
          .query(
            'UPDATE services SET last_seen_up = now(), report_count = report_count + 1, updated_at = now() WHERE "binary" = \'nova-compute\'',
          )
          .catch((err: unknown) => process.stderr.write(`heartbeat failed: ${String(err)}\n`));
      }
    }, 10_000);
  }

  /** Starts `n` scheduler processes on consecutive ports; returns their addresses. */
  async startReplicas(n: number, extraEnv: Record<string, string> = {}): Promise<string[]> {
    // NOTE: one free port per replica (consecutive ports may be taken); basePort + index lands on it.
    const ports: number[] = [];
    for (let i = 0; i < n; i++) ports.push(await freePort());
    // NOTE: the throwaway databases' admin role stands in for the scheduler's read-only role
    const admin = new URL(this.apiDb.url);
    // NOTE: each child is recorded as soon as it is spawned-and-up, and a failed start stops the
    // ones already up, so no replica outlives the benchmark.
    const started = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        startProcess(
          `scheduler-${i}`,
          'services/scheduler/dist/main.js',
          {
            CELLSCHED_API_DB_URL: this.apiDb.url,
            CELLSCHED_SCHEDULER_CELL_DB_USER: decodeURIComponent(admin.username),
            CELLSCHED_SCHEDULER_CELL_DB_PASSWORD: decodeURIComponent(admin.password),
            CELLSCHED_SCHEDULER_BASE_PORT: String((ports[i] as number) - i),
            CELLSCHED_SCHEDULER_REPLICA: String(i),
            CELLSCHED_PLACEMENT_GRPC_ADDRESSES: this.placementGrpc,
            CELLSCHED_SCHEDULER_DB_POOL: '4',
            ...extraEnv,
          },
          ports[i] as number,
        ),
      ),
    );
    this.replicas = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) {
      await this.stopReplicas();
      throw failed.reason;
    }
    return ports.map((p) => `127.0.0.1:${p}`);
  }

  async stopReplicas(): Promise<void> {
    await Promise.all(this.replicas.map(stopProcess));
    this.replicas = [];
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeats);
    await this.stopReplicas();
    if (this.placementProcess !== undefined) await stopProcess(this.placementProcess);
    await Promise.all([this.placementDb, this.apiDb, this.cell0, ...this.cells.map((c) => c.db)].map((d) => d.drop()));
  }
}
