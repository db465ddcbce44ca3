/**
 * Options that several services take, declared once so that their variable, default and bounds
 * cannot drift apart between services; each service says in `help` what it does with the value.
 * NOTE: here, in a package that loads no I/O library, because a service's `tracing.ts` loads its
 * config schema before OpenTelemetry patches gRPC, pg and amqplib: a schema imported from a client
 * package (placement-client loads @grpc/grpc-js) left every gRPC call of that service untraced.
 */
import { defineConfig, type IntOption, type UrlOption } from './schema';

/** CELLSCHED_API_DB_URL (required): the API database, as the service's own role. */
export const apiDbUrlOption = (help: string) =>
  ({
    type: 'url',
    env: 'CELLSCHED_API_DB_URL',
    protocols: ['postgres:', 'postgresql:'],
    required: true,
    secret: true,
    help,
  }) as const satisfies UrlOption;

/** CELLSCHED_BUILD_TIMEOUT_MS: a build attempt's deadline (the cell conductor's watchdog reads it). */
export const buildTimeoutOption = (help: string) =>
  ({ type: 'int', env: 'CELLSCHED_BUILD_TIMEOUT_MS', default: 300000, min: 1000, max: 86400000, help }) as const satisfies IntOption;

/** CELLSCHED_SERVICE_DOWN_TIME_MS: Nova's service_down_time (a compute whose last heartbeat is older is down). */
export const serviceDownTimeOption = (help: string) =>
  ({ type: 'int', env: 'CELLSCHED_SERVICE_DOWN_TIME_MS', default: 60000, min: 1000, max: 86400000, help }) as const satisfies IntOption;

/**
 * The options of a placement client (`@cellsched/placement-client`) (spread into the schema of every service that claims
 * through placement's gRPC service), so they take the same variables everywhere.
 */
export const placementGrpcConfigSchema = defineConfig({
  placementGrpc: {
    type: 'list',
    env: 'CELLSCHED_PLACEMENT_GRPC',
    default: ['127.0.0.1:8779'],
    help: 'Placement gRPC replicas (host:port).',
  },
  placementDeadlineMs: {
    type: 'int',
    env: 'CELLSCHED_PLACEMENT_DEADLINE_MS',
    default: 5000,
    min: 100,
    max: 120000,
    help: 'Per-attempt deadline of placement calls.',
  },
});

/**
 * `placementUrl` (CELLSCHED_PLACEMENT_URL, default http://127.0.0.1:8778): placement's REST
 * endpoint, for the services that read or write there; `help` says what the service does with it.
 */
export function placementUrlConfigSchema(help: string) {
  return defineConfig({
    placementUrl: { type: 'url', env: 'CELLSCHED_PLACEMENT_URL', protocols: ['http:', 'https:'], default: 'http://127.0.0.1:8778', help },
  });
}
