/**
 * The two targets of the benchmark on the same PostgreSQL: cellsched's placement (a
 * dedicated process and database, so a developer's `pnpm stack` is left alone) and the
 * real OpenStack Placement 8.0 (the peer scripts' uwsgi instance, reset before loading).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { PlacementHttp } from './http';

const ROOT = join(__dirname, '../../..');
// The peer scripts sit beside the repo, in shared/ (as CI lays them out).
const PEER_DIR = join(ROOT, '..', 'shared', 'peers', 'placement');

/** A running target. */
export interface Target {
  readonly name: string;
  readonly http: PlacementHttp;
  /** Empties its database (standard classes and traits stay). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function waitUp(http: PlacementHttp, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await http.req('GET', '/')).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not come up`);
}

/** Options of the cellsched target. */
export interface CellschedOptions {
  readonly adminUrl: string;
  readonly port: number;
  readonly database: string;
}

/** Starts cellsched placement (built dist) on a fresh database; `reset` restarts it on a new one. */
export async function startCellsched(o: CellschedOptions): Promise<Target> {
  const http = new PlacementHttp(`http://127.0.0.1:${o.port}`);
  let child: ChildProcess | undefined;
  const dbUrl = (() => {
    const u = new URL(o.adminUrl);
    u.pathname = `/${o.database}`;
    return u.toString();
  })();
  const stop = async (): Promise<void> => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  const start = async (): Promise<void> => {
    await stop();
    await admin(o.adminUrl, `DROP DATABASE IF EXISTS "${o.database}" WITH (FORCE)`);
    await admin(o.adminUrl, `CREATE DATABASE "${o.database}"`);
    child = spawn(process.execPath, [join(ROOT, 'services/placement/dist/main.js')], {
      env: {
        ...process.env,
        CELLSCHED_PLACEMENT_DB_URL: dbUrl,
        CELLSCHED_PLACEMENT_PORT: String(o.port),
        CELLSCHED_PLACEMENT_GRPC_PORT: String(o.port + 1),
        CELLSCHED_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitUp(http, 'cellsched placement');
  };
  await start();
  return {
    name: 'cellsched',
    http,
    reset: start,
    stop: async () => {
      await stop();
      http.close();
    },
  };
}

/** Ensures the real Placement runs (peer up.sh) and returns it; `reset` empties its database. */
export async function startPeer(url: string): Promise<Target> {
  execFileSync(join(PEER_DIR, 'up.sh'), [], { stdio: ['ignore', 'ignore', 'inherit'] });
  const http = new PlacementHttp(url);
  await waitUp(http, 'OpenStack Placement');
  const reset = async (): Promise<void> => {
    execFileSync(join(PEER_DIR, 'reset.sh'), [], { stdio: ['ignore', 'ignore', 'inherit'] });
  };
  return { name: 'placement-8.0', http, reset, stop: async () => http.close() };
}
