// The whole cellsched system as rows of the launcher's services table: schedulers, one cell
// conductor and one simulated-compute process per cell, the super-conductor and the api,
// plus the plan (names, credentials, ports, cell uuids) they share and the bootstrap steps
// (migrations, cell mappings, host discovery) that nova-manage would run.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { amqpUrl, devPassword, pgUrl } from './provision.mjs';

/** Defaults of `pnpm stack up` (DESIGN: cell 0 + 2 cells, 2 scheduler replicas). */
export const SYSTEM_DEFAULTS = Object.freeze({ cells: 2, hostsPerCell: 4, schedulers: 2, buildFailureRate: 0, prefix: 'cellsched', portOffset: 0 });

/** A stable uuid per (prefix, cell index), so cell mappings survive restarts. */
function cellUuid(prefix, index) {
  const h = createHash('sha1').update(`${prefix}:cell${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Names, credentials and ports of one system, from the `up` options. */
export function systemPlan(o, env) {
  const p = o.prefix;
  const off = o.portOffset;
  const cells = Array.from({ length: o.cells }, (_, i) => {
    const name = `cell${i + 1}`; const role = `${p}_${name}`;
    return { name, uuid: cellUuid(p, i + 1), role, dbUrl: pgUrl(env.adminUrl, role, role), transportUrl: amqpUrl(env.amqpBase, role, role) };
  });
  const apiRole = `${p}_api`;
  const cell0Role = `${p}_cell0`;
  const schedulerRole = `${p}_scheduler`;
  const apiCellsRole = `${p}_api_cells`;
  return {
    options: o, cells,
    api: { role: apiRole, dbUrl: pgUrl(env.adminUrl, apiRole, apiRole), transportUrl: amqpUrl(env.amqpBase, apiRole, apiRole) },
    cell0: { role: cell0Role, dbUrl: pgUrl(env.adminUrl, cell0Role, cell0Role) },
    ports: { api: 8774 + off, placement: 8778 + off, placementGrpc: 8779 + off, scheduler: (i) => 8780 + off + i },
    // the scheduler reads the API DB and every cell DB as its own read-only role; the cells come from cell_mappings
    scheduler: { role: schedulerRole, apiDbUrl: pgUrl(env.adminUrl, schedulerRole, apiRole) },
    // read-only roles, created here; `cellsched-manage api_db sync / db sync --read-only-role` grants them
    // SELECT on exactly what each reads (API_DB_READERS, CELL_DB_READERS), so a cell created later is covered too
    readOnly: { scheduler: schedulerRole, apiCells: apiCellsRole },
    // every role and vhost the system owns (provisioning and purge)
    roles: [apiRole, cell0Role, ...cells.map((c) => c.role)],
    readOnlyRoles: [schedulerRole, apiCellsRole],
    vhosts: [apiRole, ...cells.map((c) => c.role)],
  };
}

/**
 * `--read-only-role` options of `cellsched-manage api_db sync` / `db sync`: the database owner
 * grants each read-only role SELECT on exactly what it reads (the lists live next to the
 * queries: API_DB_READERS in @cellsched/api-db, CELL_DB_READERS in @cellsched/cell-db). A grant,
 * not a session setting: `default_transaction_read_only` can be switched off by the session
 * itself, a missing privilege cannot.
 */
export function readOnlyRoleOptions(plan, db) {
  const roles = db === 'api' ? [['scheduler', plan.readOnly.scheduler]] : [['scheduler', plan.readOnly.scheduler], ['api', plan.readOnly.apiCells]];
  return roles.flatMap(([reader, role]) => ['--read-only-role', `${reader}=${role}`]);
}

/**
 * What `up` provisioned, with each cell owner's URLs (`<state>/cells.json`, for tests and tools).
 * No service reads it: the super-conductor and the schedulers take their cells from the API
 * DB's cell_mappings, so a cell created or deleted later is not in this file.
 */
export function topology(plan) {
  return {
    apiDbUrl: plan.api.dbUrl, apiTransportUrl: plan.api.transportUrl,
    cell0: { uuid: '00000000-0000-0000-0000-000000000000', name: 'cell0', dbUrl: plan.cell0.dbUrl },
    cells: plan.cells.map((c) => ({ uuid: c.uuid, name: c.name, dbUrl: c.dbUrl, transportUrl: c.transportUrl })),
  };
}

const node = (svc, extra = []) => ['node', ['--require', `./services/${svc}/dist/tracing.js`, `services/${svc}/dist/main.js`, ...extra]];

/** The system's rows (start order), after placement. `common` is env every process gets (telemetry). */
export function systemServices(plan, common) {
  const o = plan.options;
  const placementGrpc = `127.0.0.1:${plan.ports.placementGrpc}`;
  const placementUrl = `http://127.0.0.1:${plan.ports.placement}`;
  const schedulers = Array.from({ length: o.schedulers }, (_, i) => `127.0.0.1:${plan.ports.scheduler(i)}`);
  const rows = [];
  for (const c of plan.cells) {
    rows.push({
      name: `cell-conductor-${c.name}`, build: 'services/cell-conductor', main: 'services/cell-conductor/dist/main.js', system: true, cmd: node('cell-conductor'),
      env: () => ({ ...common, CELLSCHED_CELL_UUID: c.uuid, CELLSCHED_CELL_NAME: c.name, CELLSCHED_CELL_DB_URL: c.dbUrl, CELLSCHED_CELL_TRANSPORT_URL: c.transportUrl, CELLSCHED_PLACEMENT_GRPC: placementGrpc,
        CELLSCHED_PLACEMENT_URL: placementUrl }), // the allocation audit's REST reads: this system's placement, at its port offset
      ready: { log: 'cell conductor serving' },
    });
  }
  plan.cells.forEach((c, i) => rows.push({
    name: `compute-${c.name}`, build: 'services/simulated-compute', main: 'services/simulated-compute/dist/main.js', system: true, cmd: node('simulated-compute'),
    env: () => ({ ...common, CELLSCHED_CELL_NAME: c.name, CELLSCHED_CELL_TRANSPORT_URL: c.transportUrl, CELLSCHED_PLACEMENT_URL: placementUrl,
      CELLSCHED_COMPUTE_HOSTS: String(o.hostsPerCell), CELLSCHED_COMPUTE_HOST_PREFIX: `${c.name}-compute-`, CELLSCHED_BUILD_FAILURE_RATE: String(o.buildFailureRate),
      CELLSCHED_COMPUTE_SEED: String(1000 + i), CELLSCHED_BUILD_LATENCY_MS: String(o.buildLatencyMs ?? 200) }),
    ready: { log: 'simulated compute ready' },
    // each host registers with placement (provider, inventory, traits) before the ready line:
    // ~15-30 ms per host on a loaded 2-core machine, so 1,000 hosts need more than a minute
    readyTimeoutMs: 60_000 + 100 * o.hostsPerCell,
  }));
  schedulers.forEach((addr, i) => rows.push({
    name: `scheduler-${i}`, build: 'services/scheduler', main: 'services/scheduler/dist/main.js', system: true, cmd: node('scheduler'), afterDiscover: true,
    env: () => ({ ...common, CELLSCHED_API_DB_URL: plan.scheduler.apiDbUrl, CELLSCHED_SCHEDULER_CELL_DB_USER: plan.readOnly.scheduler,
      CELLSCHED_SCHEDULER_CELL_DB_PASSWORD: devPassword(plan.readOnly.scheduler), CELLSCHED_SCHEDULER_BASE_PORT: String(plan.ports.scheduler(0)), CELLSCHED_SCHEDULER_REPLICA: String(i),
      CELLSCHED_PLACEMENT_GRPC_ADDRESSES: placementGrpc }),
    ready: { tcp: addr },
  }));
  rows.push({
    name: 'super-conductor', build: 'services/super-conductor', main: 'services/super-conductor/dist/main.js', system: true, cmd: node('super-conductor'), afterDiscover: true,
    env: () => ({ ...common, CELLSCHED_API_DB_URL: plan.api.dbUrl, CELLSCHED_API_TRANSPORT_URL: plan.api.transportUrl,
      CELLSCHED_SCHEDULER_GRPC: schedulers.join(','), CELLSCHED_PLACEMENT_GRPC: placementGrpc, CELLSCHED_PLACEMENT_URL: placementUrl }),
    ready: { log: 'super-conductor serving' },
  });
  rows.push({
    name: 'api', build: 'services/api', main: 'services/api/dist/main.js', system: true, cmd: node('api'), afterDiscover: true,
    env: () => ({ ...common, CELLSCHED_API_DB_URL: plan.api.dbUrl, CELLSCHED_API_TRANSPORT_URL: plan.api.transportUrl, CELLSCHED_API_PORT: String(plan.ports.api),
      CELLSCHED_API_CELL_DB_USER: plan.readOnly.apiCells, CELLSCHED_API_CELL_DB_PASSWORD: devPassword(plan.readOnly.apiCells) }),
    ready: { http: `http://127.0.0.1:${plan.ports.api}/` },
  });
  return rows;
}

/** Runs `cellsched-manage` against the system's API DB; returns [exit code, output]. */
function manage(plan, args, root) {
  try {
    const out = execFileSync('node', ['services/manage/dist/main.js', ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, CELLSCHED_API_DB_URL: plan.api.dbUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    return [0, out];
  } catch (e) { return [e.status ?? 1, `${e.stdout ?? ''}${e.stderr ?? ''}`]; }
}

function must(plan, args, root, okCodes = [0]) {
  const [code, out] = manage(plan, args, root);
  if (!okCodes.includes(code)) throw new Error(`cellsched-manage ${args.join(' ')} exited ${code}:\n${out}`);
  return out;
}

/**
 * nova-manage's bootstrap: API DB schema, cell0, the cells (with the plan's uuids), every cell's
 * schema, and the read-only roles' grants (the roles must exist). Idempotent; on a running
 * system with more `--cells`, the new cells are created and synced the same way.
 */
export function bootstrapCells(plan, root) {
  must(plan, ['api_db', 'sync', ...readOnlyRoleOptions(plan, 'api')], root);
  must(plan, ['cell_v2', 'map_cell0', '--database_connection', plan.cell0.dbUrl], root);
  for (const c of plan.cells) {
    // exit 2: that transport_url + database_connection is already a cell (a restart)
    must(plan, ['cell_v2', 'create_cell', '--name', c.name, '--transport-url', c.transportUrl, '--database_connection', c.dbUrl, '--uuid', c.uuid], root, [0, 2]);
  }
  must(plan, ['db', 'sync', ...readOnlyRoleOptions(plan, 'cell')], root);
}

/** `cell_v2 discover_hosts` until every simulated host has a host mapping (or the deadline). Returns the mapped count. */
export async function discoverHosts(plan, root, countMappings, timeoutMs = 60_000) {
  const want = plan.cells.length * plan.options.hostsPerCell;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    must(plan, ['cell_v2', 'discover_hosts'], root);
    const have = await countMappings();
    if (have >= want) return have;
    if (Date.now() > deadline) throw new Error(`only ${have} of ${want} compute hosts registered and mapped after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
