#!/usr/bin/env node
// cellsched's native launcher: `pnpm stack up|status|down|reset [--only NAME]`, `pnpm start`.
// Every service is one row of the services table (how to build, its database, how to start,
// how to check it is up); `up` starts them detached on loopback with pid and log files in
// .stack/. Without --only, `up` starts the whole multi-cell system (deploy/launcher/).
// For the chaos suite: `kill --only NAME [--signal SIGKILL]` signals services of a running
// system; `start --only NAME [--no-build]` starts stopped ones again (no bootstrap).
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureOwnedDatabase, ensureReadOnlyRole, ensureVhostWithUser } from '../deploy/launcher/provision.mjs';
import { composeCommand, endpoints } from '../deploy/launcher/commands.mjs';
import { purgeSystem, recordProvisioned, systemNames } from '../deploy/launcher/purge.mjs';
import { SYSTEM_DEFAULTS, bootstrapCells, discoverHosts, placementService, systemPlan, systemServices, topology } from '../deploy/launcher/system.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_URL = process.env.CELLSCHED_PG_ADMIN_URL ?? 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres';
const AMQP_BASE = process.env.CELLSCHED_AMQP_BASE_URL ?? 'amqp://127.0.0.1:5672/';
const requireFrom = createRequire(join(ROOT, 'services/placement/package.json'));
const { Client } = requireFrom('pg');

const dbUrl = (name, db = name) => { const u = new URL(ADMIN_URL); u.username = name; u.password = name; u.pathname = `/${db}`; return u.toString(); };

/**
 * Same database and code as `placement` (the system's: its prefix), configured like one of Placement's test fixtures, on
 * `basePort` + the system's port offset; started only when named (`--only placement,placement-secure-rbac`), for gabbi.sh.
 */
const placementProfile = (plan, name, basePort, env) => {
  const port = basePort + plan.options.portOffset;
  return {
    name, build: 'services/placement', database: plan.placement.role, main: 'services/placement/dist/main.js', profile: true,
    cmd: ['node', ['services/placement/dist/main.js']],
    env: () => ({ CELLSCHED_PLACEMENT_DB_URL: plan.placement.dbUrl, CELLSCHED_PLACEMENT_PORT: String(port), CELLSCHED_PLACEMENT_HOST: '127.0.0.1', CELLSCHED_PLACEMENT_MIGRATE: 'false', CELLSCHED_PLACEMENT_GRPC_PORT: '0', ...env }),
    ready: { http: `http://127.0.0.1:${port}/` },
  };
};

/** The services table: order is start order. `plan` is the system's (ports, prefix); placement's row is the same with the defaults. */
function servicesTable(plan, common) {
  const pdb = plan.placement.role;
  // alone (--only placement, for gabbi) it gets no telemetry
  const row = placementService(plan, opts.only === undefined ? common : {});
  const placement = {
    ...row, database: pdb,
    // keep what a fresh install has: standard classes and traits, and the migration record
    reset: `DO $$ BEGIN
      TRUNCATE allocations, consumers, projects, users, consumer_types, inventories, resource_provider_aggregates,
        placement_aggregates, resource_provider_traits, resource_providers RESTART IDENTITY CASCADE;
      DELETE FROM traits WHERE name LIKE 'CUSTOM\\_%';
      DELETE FROM resource_classes WHERE name LIKE 'CUSTOM\\_%';
    END $$;`,
  };
  return [
    placement,
    placementProfile(plan, 'placement-secure-rbac', 28778, { CELLSCHED_PLACEMENT_POLICY: 'secure-rbac' }),
    placementProfile(plan, 'placement-open-policy', 28779, { CELLSCHED_PLACEMENT_POLICY: 'open' }),
    placementProfile(plan, 'placement-cors', 28780, { CELLSCHED_PLACEMENT_CORS_ORIGINS: 'http://valid.example.com' }),
    // the computes' fault-control endpoint on a free loopback port (printed in their log), for the chaos suite
    ...systemServices(plan, common)
      .map((r) => (r.name.startsWith('compute-') ? { ...r, env: () => ({ CELLSCHED_COMPUTE_CONTROL_PORT: '0', ...r.env() }) } : r)),
  ];
}

const NUMERIC = { '--cells': ['cells', 1, 50], '--hosts-per-cell': ['hostsPerCell', 1, 5000], '--schedulers': ['schedulers', 1, 20],
  '--build-failure-rate': ['buildFailureRate', 0, 1], '--port-offset': ['portOffset', 0, 50000], '--build-latency-ms': ['buildLatencyMs', 0, 600000] };

function parseArgs(argv) {
  const [command = 'status', ...rest] = argv;
  const opts = { command, only: undefined, purge: false, noBuild: false, check: false, out: undefined, signal: 'SIGKILL', stateDir: process.env.CELLSCHED_STACK_DIR, system: {} };
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = rest[i].split(/=(.*)/s);
    const value = () => inline ?? rest[++i];
    if (flag === '--only') opts.only = value();
    else if (flag === '--purge') opts.purge = true;
    else if (flag === '--no-build') opts.noBuild = true;
    else if (flag === '--check') opts.check = true;
    else if (flag === '--out') opts.out = value();
    else if (flag === '--signal') opts.signal = value();
    else if (flag === '--state-dir') opts.stateDir = value();
    else if (flag === '--prefix') opts.system.prefix = value();
    else if (NUMERIC[flag]) {
      const [key, min, max] = NUMERIC[flag]; const v = Number(value());
      if (!Number.isFinite(v) || v < min || v > max || (key !== 'buildFailureRate' && !Number.isInteger(v))) throw new Error(`${flag} must be a number in [${min}, ${max}]`);
      opts.system[key] = v;
    } else throw new Error(`unknown option ${rest[i]}`);
  }
  if (opts.system.prefix !== undefined && !/^[a-z][a-z0-9_]{0,30}$/.test(opts.system.prefix)) throw new Error('--prefix must match [a-z][a-z0-9_]*');
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const STATE = resolve(opts.stateDir ?? join(ROOT, '.stack'));
const SYSTEM_FILE = join(STATE, 'system.json');
const saved = existsSync(SYSTEM_FILE) ? JSON.parse(readFileSync(SYSTEM_FILE, 'utf8')) : {};
// `up` takes the options given (else the last system's, else the defaults); the others use the last system's
const systemOptions = { ...SYSTEM_DEFAULTS, ...saved, ...opts.system };
// placement's role predates the plan's dev passwords: its password is its name (ensureDatabase)
const PLAN = systemPlan(systemOptions, { adminUrl: ADMIN_URL, amqpBase: AMQP_BASE, placementDbUrl: dbUrl(`${systemOptions.prefix}_placement`) });
const SPANS = join(STATE, 'spans.jsonl');
// NOTE: CELLSCHED_TELEMETRY_EXPORTER from the launcher's environment wins (`none`: a run without spans, as pnpm bench e2e compares)
const COMMON = { CELLSCHED_TELEMETRY_EXPORTER: process.env.CELLSCHED_TELEMETRY_EXPORTER ?? 'file', CELLSCHED_TELEMETRY_FILE: SPANS };
const SERVICES = servicesTable(PLAN, COMMON);

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
const withAdmin = (fn) => withClient(ADMIN_URL, fn);

async function ensureDatabase(name) {
  await withAdmin(async (c) => {
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

const tcpOpen = (addr) => new Promise((res) => {
  const [host, port] = addr.split(':');
  const sock = connect({ host, port: Number(port) }, () => { sock.destroy(); res(true); });
  sock.on('error', () => res(false));
  sock.setTimeout(1000, () => { sock.destroy(); res(false); });
});

/** Whether a service answers: HTTP below 500, a TCP port open, or its ready line in its log (since `from`). */
async function healthy(s, from = 0) {
  const r = s.ready;
  if (r.http) { try { return (await fetch(r.http)).status < 500; } catch { return false; } }
  if (r.tcp) return tcpOpen(r.tcp);
  if (!existsSync(logFile(s))) return false;
  return readFileSync(logFile(s)).subarray(from).includes(r.log);
}
const where = (s) => s.ready.http ?? (s.ready.tcp ? `grpc://${s.ready.tcp}` : '-');

// NOTE: tsc -b still emits when another engineer's file has a type error; start from dist
// then, with a warning, rather than refuse to start the whole service.
const built = new Set();
function build(services) {
  if (opts.noBuild && services.every((s) => existsSync(join(ROOT, s.main)))) return;
  const dirs = [...new Set(services.map((s) => s.build))].filter((d) => !built.has(d));
  if (dirs.length === 0) return;
  try {
    execFileSync('pnpm', ['exec', 'tsc', '-b', ...dirs], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const missing = services.filter((s) => !existsSync(join(ROOT, s.main)));
    if (missing.length) throw new Error(`build of ${dirs.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    console.warn(`build reported errors, starting the last emitted dist:\n${String(e.stdout ?? '').slice(0, 2000)}`);
  }
  dirs.forEach((d) => built.add(d));
}

async function startOne(s) {
  if (runningPid(s)) { console.log(`${s.name}: already running (pid ${runningPid(s)})`); return; }
  if ((s.ready.http || s.ready.tcp) && await healthy(s)) throw new Error(`${s.name}: something else already answers on ${where(s)}`);
  if (s.database) await ensureDatabase(s.database);
  build([s]);
  const from = existsSync(logFile(s)) ? statSync(logFile(s)).size : 0;
  const out = openSync(logFile(s), 'a');
  const [cmd, args] = s.cmd;
  // CELLSCHED_NODE_ARGS: extra node flags for every service (e.g. `--cpu-prof --cpu-prof-dir=DIR`,
  // which Node refuses in NODE_OPTIONS)
  const nodeArgs = cmd === 'node' ? (process.env.CELLSCHED_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
  const child = spawn(cmd, [...nodeArgs, ...args], { cwd: ROOT, detached: true, stdio: ['ignore', out, out], env: { ...process.env, ...s.env() } });
  writeFileSync(pidFile(s), String(child.pid));
  child.unref();
  const limitMs = s.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + limitMs;
  while (!(await healthy(s, from))) {
    if (!runningPid(s)) throw new Error(`${s.name} exited during start; see ${logFile(s)}`);
    if (Date.now() > deadline) throw new Error(`${s.name} not healthy after ${Math.round(limitMs / 1000)} s; see ${logFile(s)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`${s.name}: up (pid ${child.pid}) ${where(s)} log ${logFile(s)}`);
}

/** Roles, databases, vhosts and users of the system, then cellsched-manage's bootstrap. Idempotent. */
async function provisionSystem() {
  recordProvisioned(STATE, systemNames(PLAN)); // what `down --purge` must drop, whatever the options of a later `up`
  for (const role of PLAN.roles) await ensureOwnedDatabase(withAdmin, role);
  for (const vhost of PLAN.vhosts) ensureVhostWithUser(vhost);
  writeFileSync(join(STATE, 'cells.json'), JSON.stringify(topology(PLAN), null, 2), { mode: 0o600 });
  // the read-only roles first (an administrator's job); the databases' owners grant them what they read (bootstrap's --read-only-role)
  const withAdminOn = (db, fn) => { const u = new URL(ADMIN_URL); u.pathname = `/${db}`; return withClient(u.toString(), fn); };
  for (const role of PLAN.readOnlyRoles) await ensureReadOnlyRole(withAdminOn, role, []);
  bootstrapCells(PLAN, ROOT);
  console.log(`system: ${PLAN.cells.length} cells (${PLAN.cells.map((c) => `${c.name} ${c.uuid}`).join(', ')}) + cell0, databases and vhosts ready`);
}

const countHostMappings = () => withClient(PLAN.api.dbUrl, async (c) => Number((await c.query('SELECT count(*) AS n FROM host_mappings')).rows[0].n));

async function up(services) {
  mkdirSync(STATE, { recursive: true });
  const system = services.filter((s) => s.system);
  if (system.length === 0) { for (const s of services) await startOne(s); return; }
  writeFileSync(SYSTEM_FILE, JSON.stringify(systemOptions, null, 2));
  build([...services, { build: 'services/manage', main: 'services/manage/dist/main.js' }]); // manage: the bootstrap's nova-manage
  await provisionSystem();
  for (const s of services.filter((x) => !x.afterDiscover)) await startOne(s);
  const mapped = await discoverHosts(PLAN, ROOT, countHostMappings);
  console.log(`discover_hosts: ${mapped} compute hosts mapped`);
  for (const s of services.filter((x) => x.afterDiscover)) await startOne(s);
  printWhere();
}

function printWhere() {
  const o = systemOptions;
  console.log(`
cellsched is up: ${o.cells} cells x ${o.hostsPerCell} hosts, ${o.schedulers} schedulers, build failure rate ${o.buildFailureRate}
  compute API   http://127.0.0.1:${PLAN.ports.api}/v2.1      tokens (noauth2): 'admin', or '<user>:<project>'
                curl -H 'X-Auth-Token: admin' http://127.0.0.1:${PLAN.ports.api}/v2.1/servers
  placement     http://127.0.0.1:${PLAN.ports.placement}/ (gRPC 127.0.0.1:${PLAN.ports.placementGrpc})
  schedulers    ${Array.from({ length: o.schedulers }, (_, i) => `127.0.0.1:${PLAN.ports.scheduler(i)}`).join(' ')}
  databases     ${PLAN.roles.join(' ')} (role = database, dev password '<name>-dev')
  vhosts        ${PLAN.vhosts.join(' ')} (user = vhost, dev password '<name>-dev')
  cells         node services/manage/dist/main.js cell_v2 list_cells (CELLSCHED_API_DB_URL=${PLAN.api.dbUrl}); provisioned: ${join(STATE, 'cells.json')}
  logs          ${STATE}/<service>.log     (pnpm stack status lists them)
  traces        pnpm trace-tail --file ${SPANS}     one server's whole story: add --once --match SERVER_UUID
  stop          pnpm stack down${opts.stateDir ? ` --state-dir ${STATE}` : ''}`);
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
    } else if (!s.system || existsSync(pidFile(s))) console.log(`${s.name}: not running`);
    rmSync(pidFile(s), { force: true });
  }
  if (opts.purge && opts.only === undefined) {
    // placement's database goes too, whatever the prefix: kept, its providers and allocations held capacity for servers that no longer exist
    const p = await purgeSystem(PLAN, STATE, withAdmin);
    console.log(`purged databases ${p.databases.join(', ')}; roles ${p.readOnlyRoles.join(', ')}; vhosts ${p.vhosts.join(', ')}; ${p.files.length} files of ${STATE}`);
  }
}

async function status(services) {
  for (const s of services) {
    const pid = runningPid(s);
    if (s.system && !pid && !existsSync(SYSTEM_FILE)) continue; // no system was started: placement-only output, as before
    const ok = pid ? await healthy(s) : false;
    console.log(`${s.name}: ${pid ? `running (pid ${pid})` : 'stopped'}${pid ? (ok ? ', healthy' : ', NOT answering') : ''} ${where(s)}${pid ? ` log ${logFile(s)}` : ''}`);
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

/** `kill --only NAME`: sends --signal (default SIGKILL) to each named running service, waits until it is gone. */
async function kill(services) {
  if (opts.only === undefined) throw new Error('kill needs --only NAME[,NAME...]');
  for (const s of services) {
    const pid = runningPid(s);
    if (!pid) { console.log(`${s.name}: not running`); continue; }
    process.kill(pid, opts.signal);
    const deadline = Date.now() + 15_000;
    while (runningPid(s) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    console.log(`${s.name}: ${opts.signal} (pid ${pid})${runningPid(s) ? ', STILL RUNNING after 15 s' : ', gone'}`);
  }
}

/** `pnpm start`: `up` in the foreground; Ctrl-C stops everything. With --only: starts those services detached (no bootstrap). */
async function start(services) {
  if (opts.only !== undefined) { mkdirSync(STATE, { recursive: true }); for (const s of services) await startOne(s); return; }
  await up(services);
  console.log('\nforeground: Ctrl-C stops the whole system');
  // NOTE: signal listeners do not keep the event loop alive; the interval does
  const keepAlive = setInterval(() => {}, 1 << 30);
  await new Promise((res) => { process.once('SIGINT', res); process.once('SIGTERM', res); });
  clearInterval(keepAlive);
  console.log('stopping the whole system');
  await down(services);
}

/** `compose [--out FILE] [--check]`: the plan as a compose file (defaults and the given options only, never a running stack's). */
async function compose() { process.exitCode = composeCommand(ROOT, opts.system, opts.out, opts.check); }
/** `endpoints`: the addresses of the system with these options, as JSON (harnesses read them). */
async function printEndpoints() { console.log(JSON.stringify(endpoints(systemOptions))); }

const COMMANDS = { up, start, down, stop: down, status, reset, kill, compose, endpoints: printEndpoints };
const fn = COMMANDS[opts.command];
if (!fn) {
  console.error(`usage: pnpm stack up [--cells N] [--hosts-per-cell M] [--schedulers K] [--build-failure-rate R] [--port-offset P] [--prefix NAME] [--state-dir DIR]
       pnpm stack up|status|down|reset [--only ${SERVICES.map((s) => s.name).join(',')}]   (down --purge also drops the system's databases (placement's too), roles and vhosts, and its files in the state dir)
       pnpm stack kill --only NAME[,NAME] [--signal SIGKILL]     pnpm stack start --only NAME[,NAME] [--no-build]   (a running system's services)
       pnpm stack compose [--cells N] [--hosts-per-cell M] [--schedulers K] [--build-failure-rate R] [--port-offset P] [--prefix NAME] [--out FILE] [--check]
       pnpm stack endpoints [--port-offset P] [--schedulers K]   (the system's addresses, JSON)`);
  process.exit(2);
}
fn(selected(opts.only, ['down', 'stop', 'status', 'kill'].includes(opts.command))).catch((e) => { console.error(`stack ${opts.command}: ${e.message}`); process.exit(1); });
