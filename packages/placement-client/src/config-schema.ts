import { defineConfig } from '@cellsched/config';

/**
 * The options of a {@link PlacementClient} (spread into the schema of every service that claims
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
