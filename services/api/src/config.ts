import { type Config, defineConfig, placementUrlConfigSchema } from '@cellsched/config';
import { telemetryConfigSchema } from '@cellsched/telemetry';

/**
 * The compute API's options, as data (help text and defaults); loaded by main.ts and
 * tracing.ts. The cell databases are read from the API DB's cell_mappings (as Nova's API
 * does), opened read-only.
 */
export const apiConfigSchema = defineConfig({
  dbUrl: {
    type: 'url',
    env: 'CELLSCHED_API_DB_URL',
    protocols: ['postgres:', 'postgresql:'],
    default: 'postgres://cellsched_api:cellsched_api@127.0.0.1:5432/cellsched_api',
    help: 'PostgreSQL URL of the API database.',
    secret: true,
  },
  transportUrl: {
    type: 'url',
    env: 'CELLSCHED_API_TRANSPORT_URL',
    protocols: ['amqp:', 'amqps:'],
    default: 'amqp://cellsched_api:cellsched_api@127.0.0.1:5672/cellsched_api',
    help: 'RabbitMQ URL of the API bus (casts to the super-conductor).',
    secret: true,
  },
  host: { type: 'string', env: 'CELLSCHED_API_HOST', default: '127.0.0.1', help: 'Address the compute API listens on.' },
  port: { type: 'int', env: 'CELLSCHED_API_PORT', default: 8774, min: 0, max: 65535, help: 'Port of the compute API (8774 like Nova).' },
  dbPoolSize: { type: 'int', env: 'CELLSCHED_API_DB_POOL', default: 10, min: 1, max: 500, help: 'PostgreSQL connections to the API DB.' },
  cellDbUser: {
    type: 'string',
    env: 'CELLSCHED_API_CELL_DB_USER',
    help: "Read-only PostgreSQL role for the cell DBs (SELECT on what the api shows); unset: the cell mapping's credentials, in read-only sessions.",
  },
  cellDbPassword: { type: 'string', env: 'CELLSCHED_API_CELL_DB_PASSWORD', help: 'Password of cellDbUser.', secret: true },
  cellDbPoolSize: {
    type: 'int',
    env: 'CELLSCHED_API_CELL_DB_POOL',
    default: 4,
    min: 1,
    max: 100,
    help: 'PostgreSQL connections per cell DB (read-only).',
  },
  cellTimeout: {
    type: 'duration',
    env: 'CELLSCHED_API_CELL_TIMEOUT',
    default: '3s',
    help: 'Per-cell timeout of a scatter-gather; a slower cell is shown as down.',
  },
  castTimeout: {
    type: 'duration',
    env: 'CELLSCHED_API_CAST_TIMEOUT',
    default: '5s',
    help: 'How long a request waits for a cast confirm before answering and retrying in the background.',
  },
  sweepInterval: {
    type: 'duration',
    env: 'CELLSCHED_API_SWEEP_INTERVAL',
    default: '30s',
    help: 'Period of the build request sweeper (re-casts lost casts).',
  },
  sweepMinAge: {
    type: 'duration',
    env: 'CELLSCHED_API_SWEEP_MIN_AGE',
    default: '2m',
    help: 'Age after which a build request without a cell is re-cast.',
  },
  actionRecastAge: {
    type: 'duration',
    env: 'CELLSCHED_API_ACTION_RECAST_AGE',
    default: '30s',
    help: 'Age after which a server action intent the super-conductor has not cleared is cast again (its cast may be lost), and the period between re-casts.',
  },
  actionIntentExpiry: {
    type: 'duration',
    env: 'CELLSCHED_API_ACTION_INTENT_EXPIRY',
    default: '15m',
    help: 'Age after which a server action intent still not applied is given up: the super-conductor is told (it records the action as failed, never taken up), then the intent is cleared (the server leaves its pending task_state).',
  },
  ...placementUrlConfigSchema("Placement's REST endpoint (os-aggregates mirrors host membership on the compute nodes' providers)."),
  defaultAvailabilityZone: { type: 'string', env: 'CELLSCHED_DEFAULT_AZ', default: 'nova', help: "Nova's default_availability_zone." },
  migrate: {
    type: 'bool',
    env: 'CELLSCHED_API_MIGRATE',
    default: true,
    help: 'Apply pending API DB migrations at start (the api owns the API DB).',
  },
  // the same telemetry and logging options as every service (exporter, sampling, span file rotation, log level)
  ...telemetryConfigSchema,
});

export type ApiConfig = Config<typeof apiConfigSchema>;
