#!/usr/bin/env node
// cellsched's native launcher: `pnpm stack up|status|down|reset [--only NAME]`.
// Every service is one row of SERVICES (how to build, its database, how to start, how to
// check it is up); `up` starts them detached on loopback with pid and log files in .stack/.
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STATE = join(ROOT, '.stack');
const ADMIN_URL = process.env.CELLSCHED_PG_ADMIN_URL ?? 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres';
const requireFrom = createRequire(join(ROOT, 'services/placement/package.json'));
const { Client } = requireFrom('pg');

const dbUrl = (name) => { const u = new URL(ADMIN_URL); u.username = name; u.password = name; u.pathname = `/${name}`; return u.toString(); };

/** The services table: order is start order. */
const placementProfile = (name, port, env) => ({
  name, build: 'services/placement', database: 'cellsched_placement', main: 'services/placement/dist/main.js',
  // Same database and code as `placement`, configured like one of Placement's test fixtures;
  // started only when named (`--only placement,placement-secure-rbac`), for gabbi.sh.
  profile: true,
  cmd: ['node', ['services/placement/dist/main.js']],
  env: () => ({ CELLSCHED_PLACEMENT_DB_URL: dbUrl('cellsched_placement'), CELLSCHED_PLACEMENT_PORT: String(port), CELLSCHED_PLACEMENT_HOST: '127.0.0.1', CELLSCHED_PLACEMENT_MIGRATE: 'false', CELLSCHED_PLACEMENT_GRPC_PORT: '0', ...env }),
  health: `http://127.0.0.1:${port}/`,
});

const SERVICES = [
  {
    name: 'placement',
    build: 'services/placement',
    database: 'cellsched_placement',
    main: 'services/placement/dist/main.js',
    cmd: ['node', ['--require', './services/placement/dist/tracing.js', 'services/placement/dist/main.js']],
    env: () => ({ CELLSCHED_PLACEMENT_DB_URL: dbUrl('cellsched_placement'), CELLSCHED_PLACEMENT_PORT: '8778', CELLSCHED_PLACEMENT_HOST: '127.0.0.1' }),
    health: 'http://127.0.0.1:8778/',
    // keep what a fresh install has: standard classes and traits, and the migration record
    reset: `DO $$ BEGIN
      TRUNCATE allocations, consumers, projects, users, consumer_types, inventories, resource_provider_aggregates,
        placement_aggregates, resource_provider_traits, resource_providers RESTART IDENTITY CASCADE;
      DELETE FROM traits WHERE name LIKE 'CUSTOM\\_%';
      DELETE FROM resource_classes WHERE name LIKE 'CUSTOM\\_%';
    END $$;`,
  },
  placementProfile('placement-secure-rbac', 28778, { CELLSCHED_PLACEMENT_POLICY: 'secure-rbac' }),
  placementProfile('placement-open-policy', 28779, { CELLSCHED_PLACEMENT_POLICY: 'open' }),
  placementProfile('placement-cors', 28780, { CELLSCHED_PLACEMENT_CORS_ORIGINS: 'http://valid.example.com' }),
];

function parseArgs(argv) {
  const [command = 'status', ...rest] = argv;
  const opts = { command, only: undefined };
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--only') opts.only = rest[++i];
    else if (rest[i].startsWith('--only=')) opts.only = rest[i].slice(7);
  }
  return opts;
}

function selected(only, withProfiles) {
  if (only === undefined) return withProfiles ? SERVICES : SERVICES.filter((s) => !s.profile);
  const names = only.split(',');
  const unknown = names.filter((n) => !SERVICES.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown service(s): ${unknown.join(', ')}; known: ${SERVICES.map((s) => s.name).join(', ')}`);
  return SERVICES.filter((s) => names.includes(s.name));
}

async function withClient(url, fn) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try { return await fn(c); } finally { await c.end(); }
}

async function ensureDatabase(name) {
  await withClient(ADMIN_URL, async (c) => {
    const role = await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name]);
    if (role.rowCount === 0) await c.query(`CREATE ROLE "${name}" LOGIN PASSWORD '${name}'`);
    const db = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (db.rowCount === 0) await c.query(`CREATE DATABASE "${name}" OWNER "${name}"`);
  });
}

const pidFile = (s) => join(STATE, `${s.name}.pid`);
const logFile = (s) => join(STATE, `${s.name}.log`);

function runningPid(s) {
  if (!existsSync(pidFile(s))) return undefined;
  const pid = Number(readFileSync(pidFile(s), 'utf8'));
  try { process.kill(pid, 0); return pid; } catch { return undefined; }
}

async function healthy(url) {
  try { const r = await fetch(url); return r.status < 500; } catch { return false; }
}

// NOTE: tsc -b still emits when another engineer's file has a type error; start from dist
// then, with a warning, rather than refuse to start the whole service.
function build(s) {
  try {
    execFileSync('pnpm', ['exec', 'tsc', '-b', s.build], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const main = join(ROOT, s.main);
    if (!existsSync(main)) throw new Error(`build of ${s.build} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    console.warn(`${s.name}: build reported errors, starting the last emitted ${s.main}:\n${String(e.stdout ?? '').slice(0, 2000)}`);
  }
}

async function up(services) {
  mkdirSync(STATE, { recursive: true });
  for (const s of services) {
    if (runningPid(s)) { console.log(`${s.name}: already running (pid ${runningPid(s)})`); continue; }
    if (await healthy(s.health)) throw new Error(`${s.name}: something else already answers on ${s.health}`);
    if (s.database) await ensureDatabase(s.database);
    build(s);
    const out = openSync(logFile(s), 'a');
    const [cmd, args] = s.cmd;
    const child = spawn(cmd, args, { cwd: ROOT, detached: true, stdio: ['ignore', out, out], env: { ...process.env, ...s.env() } });
    writeFileSync(pidFile(s), String(child.pid));
    child.unref();
    const deadline = Date.now() + 30_000;
    while (!(await healthy(s.health))) {
      if (!runningPid(s)) throw new Error(`${s.name} exited during start; see ${logFile(s)}`);
      if (Date.now() > deadline) throw new Error(`${s.name} not healthy after 30 s; see ${logFile(s)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`${s.name}: up (pid ${child.pid}) ${s.health} log ${logFile(s)}`);
  }
}

async function down(services) {
  for (const s of [...services].reverse()) {
    const pid = runningPid(s);
    if (pid) {
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 10_000;
      while (runningPid(s) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (runningPid(s)) process.kill(pid, 'SIGKILL');
      console.log(`${s.name}: stopped (pid ${pid})`);
    } else console.log(`${s.name}: not running`);
    rmSync(pidFile(s), { force: true });
  }
}

async function status(services) {
  for (const s of services) {
    const pid = runningPid(s);
    const ok = pid ? await healthy(s.health) : false;
    console.log(`${s.name}: ${pid ? `running (pid ${pid})` : 'stopped'}${pid ? (ok ? ', healthy' : ', NOT answering') : ''} ${s.health}`);
  }
}

async function reset(services) {
  for (const s of services) {
    if (!s.reset) continue;
    await ensureDatabase(s.database);
    await withClient(dbUrl(s.database), (c) => c.query(s.reset));
    console.log(`${s.name}: database ${s.database} reset`);
  }
}

const COMMANDS = { up, start: up, down, stop: down, status, reset };
const opts = parseArgs(process.argv.slice(2));
const fn = COMMANDS[opts.command];
if (!fn) {
  console.error(`usage: pnpm stack up|status|down|reset [--only ${SERVICES.map((s) => s.name).join(',')}]`);
  process.exit(2);
}
fn(selected(opts.only, ['down', 'stop', 'status'].includes(opts.command))).catch((e) => { console.error(`stack ${opts.command}: ${e.message}`); process.exit(1); });
