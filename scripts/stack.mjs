#!/usr/bin/env node
// cellsched's native launcher: `pnpm stack up|status|down|reset [--only NAME]`, `pnpm start`.
// Every service is one row of the services table (stack/services.mjs); `up` starts them
// detached on loopback with pid and log files in .stack/ (stack/supervise.mjs). Without --only,
// `up` starts the whole multi-cell system (deploy/launcher/). For the chaos suite: `kill --only
// NAME [--signal SIGKILL]` signals services of a running system; `start --only NAME [--no-build]`
// starts stopped ones again (no bootstrap). This file holds the commands only: arguments
// (stack/args.mjs), builds (stack/build.mjs), PostgreSQL and RabbitMQ (stack/provision.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeCommand, endpoints } from '../deploy/launcher/commands.mjs';
import { countHostMappings } from '../deploy/launcher/pg.mjs';
import { purgeSystem } from '../deploy/launcher/purge.mjs';
import { SYSTEM_DEFAULTS, bootstrapCells, discoverHosts, systemPlan } from '../deploy/launcher/system.mjs';
import { parseArgs, usage } from './stack/args.mjs';
import { builder } from './stack/build.mjs';
import { ADMIN_URL, AMQP_BASE, ensureDatabase, pg, provisionSystem } from './stack/provision.mjs';
import { selectServices, servicesTable } from './stack/services.mjs';
import { supervisor, where } from './stack/supervise.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const opts = parseArgs(process.argv.slice(2));
const STATE = resolve(opts.stateDir ?? join(ROOT, '.stack'));
const SYSTEM_FILE = join(STATE, 'system.json');
const saved = existsSync(SYSTEM_FILE) ? JSON.parse(readFileSync(SYSTEM_FILE, 'utf8')) : {};
// `up` takes the options given (else the last system's, else the defaults); the others use the last system's
const systemOptions = { ...SYSTEM_DEFAULTS, ...saved, ...opts.system };
const PLAN = systemPlan(systemOptions, { adminUrl: ADMIN_URL, amqpBase: AMQP_BASE });
const SPANS = join(STATE, 'spans.jsonl');
// NOTE: CELLSCHED_TELEMETRY_EXPORTER from the launcher's environment wins (`none`: a run without spans, as pnpm bench e2e compares)
const COMMON = { CELLSCHED_TELEMETRY_EXPORTER: process.env.CELLSCHED_TELEMETRY_EXPORTER ?? 'file', CELLSCHED_TELEMETRY_FILE: SPANS };
const SERVICES = servicesTable(PLAN, COMMON, opts.only);
const build = builder(ROOT, opts.noBuild);
const procs = supervisor(STATE, ROOT);

/** Starts one row (its database first, if it has one, then its build) unless it runs. */
const startOne = (s) =>
  procs.start(s, async () => {
    if (s.database) await ensureDatabase(s.database);
    build([s]);
  });

async function up(services) {
  mkdirSync(STATE, { recursive: true });
  const system = services.filter((s) => s.system);
  if (system.length === 0) {
    for (const s of services) await startOne(s);
    return;
  }
  writeFileSync(SYSTEM_FILE, JSON.stringify(systemOptions, null, 2));
  build([...services, { build: 'services/manage', main: 'services/manage/dist/main.js' }]); // manage: the bootstrap's nova-manage
  await provisionSystem(PLAN, STATE);
  bootstrapCells(PLAN, ROOT);
  console.log(
    `system: ${PLAN.cells.length} cells (${PLAN.cells.map((c) => `${c.name} ${c.uuid}`).join(', ')}) + cell0, databases and vhosts ready`,
  );
  for (const s of services.filter((x) => !x.afterDiscover)) await startOne(s);
  const mapped = await discoverHosts(PLAN, ROOT, () => countHostMappings(PLAN));
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
  databases     ${[...PLAN.roles, PLAN.placement.role].join(' ')} (role = database, dev password '<name>-dev')
  vhosts        ${PLAN.vhosts.join(' ')} (user = vhost, dev password '<name>-dev')
  cells         node services/manage/dist/main.js cell_v2 list_cells (CELLSCHED_API_DB_URL=${PLAN.api.dbUrl}); provisioned: ${join(STATE, 'cells.json')}
  logs          ${STATE}/<service>.log     (pnpm stack status lists them)
  traces        pnpm trace-tail --file ${SPANS}     one server's whole story: add --once --match SERVER_UUID
  stop          pnpm stack down${opts.stateDir ? ` --state-dir ${STATE}` : ''}`);
}

async function down(services) {
  for (const s of [...services].reverse()) await procs.stop(s);
  if (opts.purge && opts.only === undefined) {
    // placement's database goes too, whatever the prefix: kept, its providers and allocations held capacity for servers that no longer exist
    const p = await purgeSystem(PLAN, STATE, pg.withAdmin);
    console.log(
      `purged databases ${p.databases.join(', ')}; roles ${p.readOnlyRoles.join(', ')}; vhosts ${p.vhosts.join(', ')}; ${p.files.length} files of ${STATE}`,
    );
  }
}

async function status(services) {
  for (const s of services) {
    const pid = procs.runningPid(s);
    if (s.system && !pid && !existsSync(SYSTEM_FILE)) continue; // no system was started: placement-only output, as before
    const ok = pid ? await procs.healthy(s) : false;
    console.log(
      `${s.name}: ${pid ? `running (pid ${pid})` : 'stopped'}${pid ? (ok ? ', healthy' : ', NOT answering') : ''} ${where(s)}${pid ? ` log ${procs.logFile(s)}` : ''}`,
    );
  }
}

/** `reset --only placement`: the service's own reset command (placement-manage db reset), with the service's env. */
async function reset(services) {
  for (const s of services.filter((x) => x.reset)) {
    await ensureDatabase(s.database);
    const cmd = { build: s.build, main: s.reset.main };
    builder(ROOT, true)([cmd]); // built only when missing: gabbi resets before every file
    execFileSync('node', [s.reset.main, ...s.reset.args], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, ...s.env() },
    });
    console.log(`${s.name}: database ${s.database} reset`);
  }
}

/** `kill --only NAME`: sends --signal (default SIGKILL) to each named running service, waits until it is gone. */
async function kill(services) {
  if (opts.only === undefined) throw new Error('kill needs --only NAME[,NAME...]');
  for (const s of services) await procs.signal(s, opts.signal);
}

/** `pnpm start`: `up` in the foreground; Ctrl-C stops everything. With --only: starts those services detached (no bootstrap). */
async function start(services) {
  if (opts.only !== undefined) {
    mkdirSync(STATE, { recursive: true });
    for (const s of services) await startOne(s);
    return;
  }
  await up(services);
  console.log('\nforeground: Ctrl-C stops the whole system');
  // NOTE: signal listeners do not keep the event loop alive; the interval does
  const keepAlive = setInterval(() => {}, 1 << 30);
  await new Promise((res) => {
    process.once('SIGINT', res);
    process.once('SIGTERM', res);
  });
  clearInterval(keepAlive);
  console.log('stopping the whole system');
  await down(services);
}

/** `compose [--out FILE] [--check]`: the plan as a compose file (defaults and the given options only, never a running stack's). */
async function compose() {
  process.exitCode = composeCommand(ROOT, opts.system, opts.out, opts.check);
}
/** `endpoints`: the addresses of the system with these options, as JSON (harnesses read them). */
async function printEndpoints() {
  console.log(JSON.stringify(endpoints(systemOptions)));
}

const COMMANDS = { up, start, down, stop: down, status, reset, kill, compose, endpoints: printEndpoints };
const fn = COMMANDS[opts.command];
if (!fn) {
  console.error(usage(SERVICES.map((s) => s.name)));
  process.exit(2);
}
fn(selectServices(SERVICES, opts.only, ['down', 'stop', 'status', 'kill'].includes(opts.command))).catch((e) => {
  console.error(`stack ${opts.command}: ${e.message}`);
  process.exit(1);
});
