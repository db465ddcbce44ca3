import { defineConfig } from '@cellsched/config';
import { telemetryConfigSchema } from '@cellsched/telemetry';

/** Placement's options, as data (help text and defaults); loaded by main.ts. */
export const placementConfigSchema = defineConfig({
  dbUrl: {
    type: 'url',
    env: 'CELLSCHED_PLACEMENT_DB_URL',
    protocols: ['postgres:', 'postgresql:'],
    default: 'postgres://cellsched_placement:cellsched_placement-dev@127.0.0.1:5432/cellsched_placement',
    help: 'PostgreSQL URL of the placement database.',
    secret: true,
  },
  host: { type: 'string', env: 'CELLSCHED_PLACEMENT_HOST', default: '127.0.0.1', help: 'Address the REST API listens on.' },
  port: {
    type: 'int',
    env: 'CELLSCHED_PLACEMENT_PORT',
    default: 8778,
    min: 0,
    max: 65535,
    help: 'Port of the REST API (8778 like OpenStack Placement).',
  },
  grpcPort: {
    type: 'int',
    env: 'CELLSCHED_PLACEMENT_GRPC_PORT',
    default: 8779,
    min: 0,
    max: 65535,
    help: 'Port of the gRPC PlacementService (the hot path of the scheduler and conductors).',
  },
  dbPoolSize: { type: 'int', env: 'CELLSCHED_PLACEMENT_DB_POOL', default: 20, min: 1, max: 500, help: 'Maximum PostgreSQL connections.' },
  migrate: { type: 'bool', env: 'CELLSCHED_PLACEMENT_MIGRATE', default: true, help: 'Apply pending migrations at start.' },
  policyMode: {
    type: 'enum',
    env: 'CELLSCHED_PLACEMENT_POLICY',
    values: ['legacy', 'secure-rbac', 'open'],
    default: 'legacy',
    help: "Placement 8.0's policy configuration: legacy (defaults), secure-rbac (enforce_scope + new defaults) or open (every rule '@').",
  },
  corsAllowedOrigins: {
    type: 'list',
    env: 'CELLSCHED_PLACEMENT_CORS_ORIGINS',
    default: [],
    help: 'Origins allowed by CORS (none: CORS off).',
  },
  // the same telemetry and logging options as every service (exporter, sampling, span file rotation, log level)
  ...telemetryConfigSchema,
});
