// The docker compose rendering of the system plan (`pnpm stack compose`): the same services,
// credentials, read-only roles, cell uuids and ports as `pnpm stack up`, as containers on one
// network. PostgreSQL and RabbitMQ come up empty; the one-shot `init` provisions them exactly as
// the native launcher does (init.mjs) and runs the bootstrap, then waits for host discovery.
import { connectionBudget, placementService, systemPlan, systemServices } from './system.mjs';
import { devPassword } from './provision.mjs';
import { toYaml } from './yaml.mjs';

export const IMAGES = Object.freeze({ app: 'cellsched/app:dev', postgres: 'cellsched/postgres:dev', rabbitmq: 'cellsched/rabbitmq:dev' });
/** The administrators of the deployment's PostgreSQL and RabbitMQ (dev passwords); only `init` gets them. */
export const ADMINS = Object.freeze({ postgres: 'postgres', rabbitmq: 'admin' });
/** In each bus consumer's container: kept fresh while its bus is connected (CELLSCHED_HEALTH_FILE). */
const HEALTH_FILE = '/tmp/cellsched-health';
/** In `init`'s container once the bootstrap is done (the cells' processes may start; discovery goes on). */
export const BOOTSTRAPPED_FILE = '/tmp/cellsched-bootstrapped';
/** The computes' fault-control port, inside their containers (loopback; tests reach it with docker exec). */
export const COMPUTE_CONTROL_PORT = 8790;
/** Spans go here unless CELLSCHED_OTLP_ENDPOINT says otherwise (the jaeger profile: http://jaeger:4318). */
const OTLP_ENDPOINT = (plan) => `\${CELLSCHED_OTLP_ENDPOINT:-http://traces:${plan.ports.traces}}`;
const LOGGING = { driver: 'json-file', options: { 'max-size': '20m', 'max-file': '3' } };

/** The plan as the containers see it: PostgreSQL, RabbitMQ and every service by its compose name. */
export function composePlan(options) {
  return systemPlan(options, {
    adminUrl: `postgres://${ADMINS.postgres}:${devPassword(ADMINS.postgres)}@postgres:5432/postgres`,
    amqpBase: 'amqp://rabbitmq:5672/',
    hostOf: (service) => service,
    listen: '0.0.0.0',
  });
}

/** init's arguments: the plan's options, so init computes the very plan this file was rendered from. */
export function planArgs(o) {
  return [
    '--cells',
    String(o.cells),
    '--hosts-per-cell',
    String(o.hostsPerCell),
    '--schedulers',
    String(o.schedulers),
    '--prefix',
    o.prefix,
  ];
}

const healthy = (names) => Object.fromEntries(names.map((n) => [n, { condition: 'service_healthy' }]));
const check = (test, startMs = 60_000) => ({
  test,
  interval: '3s',
  timeout: '5s',
  retries: 5,
  start_period: `${Math.ceil(startMs / 1000)}s`,
});
const nodeHttpCheck = (url) => [
  'CMD',
  'node',
  '-e',
  `fetch('${url}').then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))`,
];
const tcpCheck = (...ports) => ['CMD', 'bash', '-c', ports.map((p) => `</dev/tcp/127.0.0.1/${p}`).join(' && ')];

/** How Docker tells a service is up: its HTTP answer, its gRPC port, or its health file (a bus consumer has no port). */
function healthcheckOf(row) {
  if (row.ready.http) return check(nodeHttpCheck(row.ready.http), row.readyTimeoutMs);
  if (row.ready.tcp) return check(tcpCheck(row.ready.tcp.split(':')[1]), row.readyTimeoutMs);
  return check(['CMD', 'sh', '-c', `find ${HEALTH_FILE} -mmin -0.5 | grep -q .`], row.readyTimeoutMs);
}

/** Start order by health, as the native launcher's: placement, cell conductors, computes, (discovery), schedulers, super-conductor, api. */
function dependsOn(plan, row) {
  const init = (condition) => ({ init: { condition } });
  if (row.name === 'placement') return { ...init('service_healthy'), ...healthy(['traces']) };
  if (row.name.startsWith('cell-conductor-')) return { ...init('service_healthy'), ...healthy(['rabbitmq', 'placement', 'traces']) };
  if (row.name.startsWith('compute-')) return healthy(['rabbitmq', 'placement', `cell-conductor-${row.cell}`]);
  if (row.name.startsWith('scheduler-')) return { ...init('service_completed_successfully'), ...healthy(['placement']) };
  const schedulers = Array.from({ length: plan.options.schedulers }, (_, i) => `scheduler-${i}`);
  if (row.name === 'super-conductor') return { ...init('service_completed_successfully'), ...healthy(['rabbitmq', ...schedulers]) };
  return { ...init('service_completed_successfully'), ...healthy(['super-conductor']) };
}

/** A cellsched process as a container of the app image. */
function appService(plan, row, build) {
  const [cmd, args] = row.cmd;
  const env = {
    ...row.env(),
    ...(row.ready.log ? { CELLSCHED_HEALTH_FILE: HEALTH_FILE } : {}),
    ...(row.name.startsWith('compute-') ? { CELLSCHED_COMPUTE_CONTROL_PORT: String(COMPUTE_CONTROL_PORT) } : {}),
  };
  return {
    image: IMAGES.app,
    build,
    hostname: row.name,
    restart: 'unless-stopped',
    command: [cmd, ...args],
    environment: env,
    ports: row.publish?.map((p) => `127.0.0.1:${p}:${p}`),
    healthcheck: healthcheckOf(row),
    depends_on: dependsOn(plan, row),
    logging: LOGGING,
  };
}

/** PostgreSQL, RabbitMQ and the trace collector: images built locally (deploy/images), data in named volumes. */
function infrastructure(plan, context, build) {
  const budget = connectionBudget(plan).total + 20; // + the init's admin session, operators' psql
  return {
    postgres: {
      image: IMAGES.postgres,
      build: { context: `${context}/deploy/images/postgres` },
      hostname: 'postgres',
      restart: 'unless-stopped',
      command: ['postgres', '-c', `max_connections=${budget}`],
      environment: { POSTGRES_PASSWORD: devPassword(ADMINS.postgres) },
      volumes: ['postgres-data:/var/lib/postgresql/data'],
      ports: [`127.0.0.1:${plan.ports.postgres}:5432`],
      healthcheck: check(['CMD', 'pg_isready', '-q', '-h', '127.0.0.1', '-U', ADMINS.postgres]),
      logging: LOGGING,
    },
    rabbitmq: {
      image: IMAGES.rabbitmq,
      build: { context: `${context}/deploy/images/rabbitmq` },
      hostname: 'rabbitmq',
      restart: 'unless-stopped',
      environment: { RABBITMQ_DEFAULT_USER: ADMINS.rabbitmq, RABBITMQ_DEFAULT_PASS: devPassword(ADMINS.rabbitmq) },
      volumes: ['rabbitmq-data:/var/lib/rabbitmq'],
      healthcheck: check(tcpCheck(5672, 15672)),
      logging: LOGGING,
    },
    traces: {
      image: IMAGES.app,
      build,
      hostname: 'traces',
      restart: 'unless-stopped',
      // quiet 8 s: the services' batch exporters send every 5 s, so a trace is printed whole, not in parts
      command: ['node', 'packages/telemetry/dist/bin/trace-tail.js', '--listen', `0.0.0.0:${plan.ports.traces}`, '--quiet-ms', '8000'],
      ports: [`127.0.0.1:${plan.ports.traces}:${plan.ports.traces}`],
      healthcheck: check(tcpCheck(plan.ports.traces)),
      logging: LOGGING,
    },
  };
}

/** The one-shot bootstrap: provisioning, nova-manage's bootstrap (healthy from then on), then discover_hosts until every host is mapped. */
function initService(plan, build) {
  return {
    image: IMAGES.app,
    build,
    hostname: 'init',
    restart: 'no',
    command: ['node', 'deploy/launcher/init.mjs', ...planArgs(plan.options)],
    environment: {
      CELLSCHED_PG_ADMIN_URL: `postgres://${ADMINS.postgres}:${devPassword(ADMINS.postgres)}@postgres:5432/postgres`,
      CELLSCHED_RABBITMQ_ADMIN_URL: `http://${ADMINS.rabbitmq}:${devPassword(ADMINS.rabbitmq)}@rabbitmq:15672`,
    },
    healthcheck: { test: ['CMD', 'test', '-f', BOOTSTRAPPED_FILE], interval: '2s', timeout: '5s', retries: 150 },
    depends_on: healthy(['postgres', 'rabbitmq']),
    logging: LOGGING,
  };
}

/** Jaeger for users who can pull its image: `CELLSCHED_OTLP_ENDPOINT=http://jaeger:4318 docker compose --profile jaeger up -d`. */
const jaeger = () => ({
  image: 'jaegertracing/all-in-one:1.62.0',
  profiles: ['jaeger'],
  environment: { COLLECTOR_OTLP_ENABLED: 'true' },
  ports: ['127.0.0.1:16686:16686'],
  logging: LOGGING,
});

/** The compose document of `plan`; `context` is the repository root relative to the file (image builds). */
export function composeDocument(plan, context) {
  const build = { context, dockerfile: 'deploy/Dockerfile' };
  const common = { CELLSCHED_TELEMETRY_EXPORTER: 'otlp', CELLSCHED_TELEMETRY_ENDPOINT: OTLP_ENDPOINT(plan) };
  const rows = [placementService(plan, common), ...systemServices(plan, common)];
  return {
    services: {
      ...infrastructure(plan, context, build),
      init: initService(plan, build),
      ...Object.fromEntries(rows.map((r) => [r.name, appService(plan, r, build)])),
      jaeger: jaeger(),
    },
    volumes: { 'postgres-data': {}, 'rabbitmq-data': {} },
  };
}

/** The header: what the file is, how it was made, how to use it. */
function header(plan, command) {
  const o = plan.options;
  const b = connectionBudget(plan);
  return [
    `cellsched under docker compose: ${o.cells} cells x ${o.hostsPerCell} simulated hosts, ${o.schedulers} schedulers, build failure rate ${o.buildFailureRate}.`,
    `GENERATED by \`${command}\` from the plan \`pnpm stack up\` runs (deploy/launcher): do not edit.`,
    'Build the images first (deploy/README.md: deploy/images/build.sh without a registry), then:',
    '  docker-compose -f deploy/compose.yaml up -d      (or docker compose ...)',
    `  compute API http://127.0.0.1:${plan.ports.api}/v2.1 (token 'admin'), placement http://127.0.0.1:${plan.ports.placement}/,`,
    `  PostgreSQL 127.0.0.1:${plan.ports.postgres} (role = database, password '<name>-dev'),`,
    `  traces: docker-compose logs -f traces (the OTLP collector, published on 127.0.0.1:${plan.ports.traces})`,
    `PostgreSQL max_connections = ${b.total} + 20: ${Object.entries(b.perService)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')} (pools: deploy/launcher/system.mjs DB_POOLS).`,
  ];
}

/** The compose file's text for `options`; `context`: repository root relative to the file; `command`: how it was generated. */
export function renderCompose(options, context, command) {
  const plan = composePlan(options);
  return toYaml(composeDocument(plan, context), header(plan, command));
}
