// A real placement (child process, own test database, free ports) for the `placement audit` tests.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';

const ROOT = join(__dirname, '..', '..', '..', '..');

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const addr = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return typeof addr === 'object' && addr !== null ? addr.port : 0;
}

export interface PlacementProcess {
  readonly url: string;
  readonly db: TestDatabase;
  stop(): Promise<void>;
}

/** Builds and starts placement on free ports with a migrated test database; resolves once it answers. */
export async function startPlacement(): Promise<PlacementProcess> {
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-b', join(ROOT, 'services', 'placement')], { stdio: 'inherit' });
  const db = await createTestDatabase({
    kind: 'placement',
    migrationsDir: join(ROOT, 'services', 'placement', 'migrations'),
    prefix: 'mng_placement',
    poolMax: 2,
  });
  const [port, grpcPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'services', 'placement', 'dist', 'main.js')], {
    env: {
      CELLSCHED_PLACEMENT_DB_URL: db.url,
      CELLSCHED_PLACEMENT_PORT: String(port),
      CELLSCHED_PLACEMENT_GRPC_PORT: String(grpcPort),
      CELLSCHED_PLACEMENT_MIGRATE: 'false',
      CELLSCHED_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error('placement did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null)
      await new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGTERM');
      });
    await db.drop();
  };
  return { url, db, stop };
}

/** A placement REST call as admin at microversion 1.39; the body parsed (or undefined). */
export async function placementCall<T>(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  version = '1.39',
): Promise<{ status: number; body: T }> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': `placement ${version}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}
