// The whole cellsched system as rows of the launcher's services table: schedulers, one cell
// conductor and one simulated-compute process per cell, the super-conductor and the api,
// plus the plan (names, credentials, ports, cell uuids) they share and the bootstrap steps
// (migrations, cell mappings, host discovery) that nova-manage would run.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { amqpUrl, devPassword, pgUrl } from './provision.mjs';

/** Defaults of `pnpm stack up` (DESIGN: cell 0 + 2 cells, 2 scheduler replicas). */
export const SYSTEM_DEFAULTS = Object.freeze({
  cells: 2,
  hostsPerCell: 4,
  schedulers: 2,
  buildFailureRate: 0,
  prefix: 'cellsched',
  portOffset: 0,
});

/**
 * Ports of one system at port offset 0 (DESIGN's contract): the compute API, placement's REST
 * API and its gRPC service, the first scheduler replica (replica i: +i), the OTLP collector of a
 * compose deployment (its `traces` service) and, under compose, PostgreSQL published on loopback.
 */
export const BASE_PORTS = Object.freeze({
  api: 8774,
  placement: 8778,
  placementGrpc: 8779,
  scheduler: 8780,
  traces: 4318,
  postgres: 15432,
});

/**
 * Database connections each process opens at most (its pool sizes, passed to it as options):
 * PostgreSQL's max_connections under compose is their sum (see connectionBudget).
 * apiCell: the api's pool per cell DB; scheduler and superConductor: per database they open.
 */
export const DB_POOLS = Object.freeze({
  placement: 20,
  api: 10,
  apiCell: 4,
  scheduler: 4,
  superConductor: 10,
  cellConductor: 20,
  manage: 2,
});

/** A stable uuid per (prefix, cell index), so cell mappings survive restarts. */
function cellUuid(prefix, index) {
  const h = createHash('sha1').update(`${prefix}:cell${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Names, credentials and ports of one system, from the `up` options. `env`: where PostgreSQL
 * (`adminUrl`) and RabbitMQ (`amqpBase`) are; `hostOf(service)` is the address a process
 * reaches another at and `listen` the address services listen on (loopback natively, service
 * names and every interface under compose).
 */
export function systemPlan(o, env) {
  const p = o.prefix;
  const off = o.portOffset;
  const hostOf = env.hostOf ?? (() => '127.0.0.1');
  const placementRole = `${p}_placement`;
  const cells = Array.from({ length: o.cells }, (_, i) => {
    const name = `cell${i + 1}`;
    const role = `${p}_${name}`;
    return {
      name,
      uuid: cellUuid(p, i + 1),
      role,
      dbUrl: pgUrl(env.adminUrl, role, role),
      transportUrl: amqpUrl(env.amqpBase, role, role),
    };
  });
  const apiRole = `${p}_api`;
  const cell0Role = `${p}_cell0`;
  const schedulerRole = `${p}_scheduler`;
  const apiCellsRole = `${p}_api_cells`;
  return {
    options: o,
    cells,
    api: { role: apiRole, dbUrl: pgUrl(env.adminUrl, apiRole, apiRole), transportUrl: amqpUrl(env.amqpBase, apiRole, apiRole) },
    cell0: { role: cell0Role, dbUrl: pgUrl(env.adminUrl, cell0Role, cell0Role) },
    placement: { role: placementRole, dbUrl: pgUrl(env.adminUrl, placementRole, placementRole) },
    ports: {
      api: BASE_PORTS.api + off,
      placement: BASE_PORTS.placement + off,
      placementGrpc: BASE_PORTS.placementGrpc + off,
      scheduler: (i) => BASE_PORTS.scheduler + off + i,
      traces: BASE_PORTS.traces + off,
      postgres: BASE_PORTS.postgres + off,
    },
    // `service:port` as another process reaches it (scheduler-<i>, placement, ...), and the address services listen on
    at: (service, port) => `${hostOf(service)}:${port}`,
    listen: env.listen ?? '127.0.0.1',
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
  const roles =
    db === 'api'
      ? [['scheduler', plan.readOnly.scheduler]]
      : [
          ['scheduler', plan.readOnly.scheduler],
          ['api', plan.readOnly.apiCells],
        ];
  return roles.flatMap(([reader, role]) => ['--read-only-role', `${reader}=${role}`]);
}

/**
 * What `up` provisioned, with each cell owner's URLs (`<state>/cells.json`, for tests and tools).
 * No service reads it: the super-conductor and the schedulers take their cells from the API
 * DB's cell_mappings, so a cell created or deleted later is not in this file.
 */
export function topology(plan) {
  return {
    apiDbUrl: plan.api.dbUrl,
    apiTransportUrl: plan.api.transportUrl,
    cell0: { uuid: '00000000-0000-0000-0000-000000000000', name: 'cell0', dbUrl: plan.cell0.dbUrl },
    cells: plan.cells.map((c) => ({ uuid: c.uuid, name: c.name, dbUrl: c.dbUrl, transportUrl: c.transportUrl })),
  };
}

const node = (svc, extra = []) => ['node', ['--require', `./services/${svc}/dist/tracing.js`, `services/${svc}/dist/main.js`, ...extra]];
const row = (name, svc, fields) => ({
  name,
  build: `services/${svc}`,
  main: `services/${svc}/dist/main.js`,
  system: true,
  cmd: node(svc),
  ...fields,
});

/** Where each process finds placement and the schedulers (loopback natively, service names under compose). */
function endpoints(plan) {
  return {
    placementGrpc: plan.at('placement', plan.ports.placementGrpc),
    placementUrl: `http://${plan.at('placement', plan.ports.placement)}`,
    schedulers: Array.from({ length: plan.options.schedulers }, (_, i) => plan.at(`scheduler-${i}`, plan.ports.scheduler(i))),
  };
}

/** Placement's row: REST and gRPC on the plan's ports (`publish`: the ports a compose deployment publishes on the host). */
export function placementService(plan, common) {
  return {
    name: 'placement',
    build: 'services/placement',
    main: 'services/placement/dist/main.js',
    cmd: node('placement'),
    publish: [plan.ports.placement],
    env: () => ({
      ...common,
      CELLSCHED_PLACEMENT_DB_URL: plan.placement.dbUrl,
      CELLSCHED_PLACEMENT_PORT: String(plan.ports.placement),
      CELLSCHED_PLACEMENT_GRPC_PORT: String(plan.ports.placementGrpc),
      CELLSCHED_PLACEMENT_HOST: plan.listen,
      CELLSCHED_PLACEMENT_DB_POOL: String(DB_POOLS.placement),
    }),
    ready: { http: `http://127.0.0.1:${plan.ports.placement}/` },
  };
}

/** One cell conductor and one simulated-compute process per cell, with that cell's credentials only. */
function cellServices(plan, common, at) {
  const o = plan.options;
  const conductors = plan.cells.map((c) =>
    row(`cell-conductor-${c.name}`, 'cell-conductor', {
      cell: c.name,
      env: () => ({
        ...common,
        CELLSCHED_CELL_UUID: c.uuid,
        CELLSCHED_CELL_NAME: c.name,
        CELLSCHED_CELL_DB_URL: c.dbUrl,
        CELLSCHED_CELL_TRANSPORT_URL: c.transportUrl,
        CELLSCHED_PLACEMENT_GRPC: at.placementGrpc,
        CELLSCHED_CELL_DB_POOL: String(DB_POOLS.cellConductor),
        CELLSCHED_PLACEMENT_URL: at.placementUrl,
      }), // the allocation audit's REST reads: this system's placement, at its port offset
      ready: { log: 'cell conductor serving' },
    }),
  );
  const computes = plan.cells.map((c, i) =>
    row(`compute-${c.name}`, 'simulated-compute', {
      cell: c.name,
      env: () => ({
        ...common,
        CELLSCHED_CELL_NAME: c.name,
        CELLSCHED_CELL_TRANSPORT_URL: c.transportUrl,
        CELLSCHED_PLACEMENT_URL: at.placementUrl,
        CELLSCHED_COMPUTE_HOSTS: String(o.hostsPerCell),
        CELLSCHED_COMPUTE_HOST_PREFIX: `${c.name}-compute-`,
        CELLSCHED_BUILD_FAILURE_RATE: String(o.buildFailureRate),
        CELLSCHED_COMPUTE_SEED: String(1000 + i),
        CELLSCHED_BUILD_LATENCY_MS: String(o.buildLatencyMs ?? 200),
      }),
      ready: { log: 'simulated compute ready' },
      // each host registers with placement (provider, inventory, traits) before the ready line:
      // ~15-30 ms per host on a loaded 2-core machine, so 1,000 hosts need more than a minute
      readyTimeoutMs: 60_000 + 100 * o.hostsPerCell,
    }),
  );
  return [...conductors, ...computes];
}

/** The API-level rows, started after discover_hosts: K schedulers (read-only roles), the super-conductor, the api. */
function apiLevelServices(plan, common, at) {
  const schedulers = at.schedulers.map((_, i) =>
    row(`scheduler-${i}`, 'scheduler', {
      afterDiscover: true,
      env: () => ({
        ...common,
        CELLSCHED_API_DB_URL: plan.scheduler.apiDbUrl,
        CELLSCHED_SCHEDULER_CELL_DB_USER: plan.readOnly.scheduler,
        CELLSCHED_SCHEDULER_CELL_DB_PASSWORD: devPassword(plan.readOnly.scheduler),
        CELLSCHED_SCHEDULER_BASE_PORT: String(plan.ports.scheduler(0)),
        CELLSCHED_SCHEDULER_REPLICA: String(i),
        CELLSCHED_SCHEDULER_HOST: plan.listen,
        CELLSCHED_PLACEMENT_GRPC_ADDRESSES: at.placementGrpc,
        CELLSCHED_SCHEDULER_DB_POOL: String(DB_POOLS.scheduler),
      }),
      ready: { tcp: `127.0.0.1:${plan.ports.scheduler(i)}` },
    }),
  );
  const superConductor = row('super-conductor', 'super-conductor', {
    afterDiscover: true,
    env: () => ({
      ...common,
      CELLSCHED_API_DB_URL: plan.api.dbUrl,
      CELLSCHED_API_TRANSPORT_URL: plan.api.transportUrl,
      CELLSCHED_SCHEDULER_GRPC: at.schedulers.join(','),
      CELLSCHED_PLACEMENT_GRPC: at.placementGrpc,
      CELLSCHED_PLACEMENT_URL: at.placementUrl,
      CELLSCHED_SUPER_CONDUCTOR_DB_POOL: String(DB_POOLS.superConductor),
    }),
    ready: { log: 'super-conductor serving' },
  });
  const api = row('api', 'api', {
    afterDiscover: true,
    publish: [plan.ports.api],
    env: () => ({
      ...common,
      CELLSCHED_API_DB_URL: plan.api.dbUrl,
      CELLSCHED_API_TRANSPORT_URL: plan.api.transportUrl,
      CELLSCHED_API_PORT: String(plan.ports.api),
      CELLSCHED_API_HOST: plan.listen,
      CELLSCHED_API_CELL_DB_USER: plan.readOnly.apiCells,
      CELLSCHED_API_CELL_DB_PASSWORD: devPassword(plan.readOnly.apiCells),
      CELLSCHED_API_DB_POOL: String(DB_POOLS.api),
      CELLSCHED_API_CELL_DB_POOL: String(DB_POOLS.apiCell),
      CELLSCHED_PLACEMENT_URL: at.placementUrl,
    }), // os-aggregates mirrors membership in placement
    ready: { http: `http://127.0.0.1:${plan.ports.api}/` },
  });
  return [...schedulers, superConductor, api];
}

/** The system's rows (start order), after placement. `common` is env every process gets (telemetry). */
export function systemServices(plan, common) {
  const at = endpoints(plan);
  return [...cellServices(plan, common, at), ...apiLevelServices(plan, common, at)];
}

/**
 * PostgreSQL connections the system may open: each process's pools (DB_POOLS) times the
 * databases it opens (the api: API DB + cell0 + each cell read-only; a scheduler: API DB + each
 * cell; the super-conductor: API DB + cell0 + each cell), plus the bootstrap's cellsched-manage.
 */
export function connectionBudget(plan) {
  const cells = plan.cells.length;
  const perService = {
    placement: DB_POOLS.placement,
    api: DB_POOLS.api + DB_POOLS.apiCell * (cells + 1),
    schedulers: plan.options.schedulers * DB_POOLS.scheduler * (cells + 1),
    'super-conductor': DB_POOLS.superConductor * (cells + 2),
    'cell conductors': DB_POOLS.cellConductor * cells,
    'cellsched-manage': DB_POOLS.manage * (cells + 2),
  };
  return { perService, total: Object.values(perService).reduce((a, b) => a + b, 0) };
}

/** Runs `cellsched-manage` against the system's API DB; returns [exit code, output]. */
function manage(plan, args, root) {
  try {
    const out = execFileSync('node', ['services/manage/dist/main.js', ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CELLSCHED_API_DB_URL: plan.api.dbUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return [0, out];
  } catch (e) {
    return [e.status ?? 1, `${e.stdout ?? ''}${e.stderr ?? ''}`];
  }
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
    must(
      plan,
      ['cell_v2', 'create_cell', '--name', c.name, '--transport-url', c.transportUrl, '--database_connection', c.dbUrl, '--uuid', c.uuid],
      root,
      [0, 2],
    );
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
