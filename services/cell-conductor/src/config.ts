import { buildTimeoutOption, defineConfig, serviceDownTimeOption } from '@cellsched/config';
import { placementGrpcConfigSchema, placementUrlConfigSchema } from '@cellsched/placement-client';
import { healthFileConfigSchema, telemetryConfigSchema } from '@cellsched/telemetry';

/** The cell conductor's options, as data; loaded by main.ts. Credentials are its cell's only. */
export const cellConductorConfigSchema = defineConfig({
  ...telemetryConfigSchema,
  cellUuid: { type: 'string', env: 'CELLSCHED_CELL_UUID', help: "This cell's uuid (its cell_mappings row)." },
  cellName: { type: 'string', env: 'CELLSCHED_CELL_NAME', default: 'cell1', help: 'Cell name for logs and spans.' },
  dbUrl: {
    type: 'url',
    env: 'CELLSCHED_CELL_DB_URL',
    protocols: ['postgres:', 'postgresql:'],
    secret: true,
    help: "PostgreSQL URL of this cell's database, with this cell's role (nothing else).",
  },
  transportUrl: {
    type: 'url',
    env: 'CELLSCHED_CELL_TRANSPORT_URL',
    protocols: ['amqp:', 'amqps:'],
    secret: true,
    help: "RabbitMQ URL of this cell's vhost, with this cell's user (nothing else).",
  },
  ...placementGrpcConfigSchema,
  ...placementUrlConfigSchema("Placement's REST endpoint (the allocation audit reads provider allocations)."),
  auditIntervalMs: {
    type: 'int',
    env: 'CELLSCHED_AUDIT_INTERVAL_MS',
    default: 300000,
    min: 0,
    max: 86400000,
    help: 'Period of the allocation audit (0: off).',
  },
  auditGraceMs: {
    type: 'int',
    env: 'CELLSCHED_AUDIT_GRACE_MS',
    default: 120000,
    min: 0,
    max: 86400000,
    help: 'A suspicious allocation is healed only if a later audit, this long after, still finds it (claims in flight are not leaks).',
  },
  buildTimeoutMs: buildTimeoutOption('Build deadline set on each rescheduled attempt (the watchdog reads it).'),
  serviceDownTimeMs: serviceDownTimeOption(
    "Nova's service_down_time: a compute whose last heartbeat is older is down (the watchdog retries its lost builds).",
  ),
  stepTimeoutMs: {
    type: 'int',
    env: 'CELLSCHED_STEP_TIMEOUT_MS',
    default: 300000,
    min: 1000,
    max: 86400000,
    help: 'Deadline of one step of a server action (stop, migrate, ...) on a compute: no result by then and the step has failed (the watchdog moves the action on).',
  },
  resizeConfirmWindowS: {
    type: 'int',
    env: 'CELLSCHED_RESIZE_CONFIRM_WINDOW',
    default: 0,
    min: 0,
    max: 31536000,
    help: "Nova's resize_confirm_window: seconds after which a resize or cold migration waiting in VERIFY_RESIZE is confirmed automatically (0: never, as Nova's default).",
  },
  watchdogIntervalMs: {
    type: 'int',
    env: 'CELLSCHED_WATCHDOG_INTERVAL_MS',
    default: 10000,
    min: 0,
    max: 3600000,
    help: "Period of the build and step watchdogs, the auto-confirm and the sweep of deleted instances' moves (0: off).",
  },
  dependencyRetryMs: {
    type: 'int',
    env: 'CELLSCHED_CONDUCTOR_DEPENDENCY_RETRY_MS',
    default: 30000,
    min: 0,
    max: 600000,
    help: 'How long one delivery of a build cast keeps retrying while placement, PostgreSQL or the bus is unavailable, before the bus redelivers it (0: no in-delivery retry).',
  },
  prefetch: { type: 'int', env: 'CELLSCHED_CONDUCTOR_PREFETCH', default: 32, min: 1, max: 1000, help: 'Casts handled at once.' },
  ...healthFileConfigSchema,
  dbPoolSize: { type: 'int', env: 'CELLSCHED_CELL_DB_POOL', default: 20, min: 1, max: 500, help: 'Maximum PostgreSQL connections.' },
  migrate: { type: 'bool', env: 'CELLSCHED_CELL_MIGRATE', default: true, help: "Apply the cell database's pending migrations at start." },
});
