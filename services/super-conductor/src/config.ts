import {
  apiDbUrlOption,
  buildTimeoutOption,
  type Config,
  defineConfig,
  placementGrpcConfigSchema,
  placementUrlConfigSchema,
  serviceDownTimeOption,
} from '@cellsched/config';
import { healthFileConfigSchema, telemetryConfigSchema } from '@cellsched/telemetry';

/**
 * The super-conductor's options, as data; loaded by main.ts and tracing.ts. Only the API
 * database and the API bus are configured here; cell0 and every cell (database, bus,
 * disabled) come from the API database's cell_mappings, re-read every cellMappingsRefresh.
 */
export const superConductorConfigSchema = defineConfig({
  ...telemetryConfigSchema,
  apiDbUrl: apiDbUrlOption(
    'PostgreSQL URL of the API database (read and written: build requests, mappings; cell_mappings say where the cells are).',
  ),
  apiTransportUrl: {
    type: 'url',
    env: 'CELLSCHED_API_TRANSPORT_URL',
    protocols: ['amqp:', 'amqps:'],
    required: true,
    secret: true,
    help: 'RabbitMQ URL of the API bus (this service consumes its topic `conductor`).',
  },
  cellMappingsRefresh: {
    type: 'duration',
    env: 'CELLSCHED_CELL_MAPPINGS_REFRESH',
    default: '2s',
    help: 'How often cell_mappings is re-read: a created cell is opened, a deleted one closed, a changed URL reconnected (a cell the scheduler names that is not open yet is looked up at once).',
  },
  cellBusConnectTimeout: {
    type: 'duration',
    env: 'CELLSCHED_CELL_BUS_CONNECT_TIMEOUT',
    default: '5s',
    help: "How long opening a cell's bus may take before that cell is left for the next refresh (the other cells are not held up).",
  },
  maxAttempts: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_MAX_ATTEMPTS',
    default: 3,
    min: 1,
    max: 20,
    help: "Nova's [scheduler] max_attempts: hosts tried per build. The super-conductor asks the scheduler for max_attempts - 1 alternates; this is the only place it is read.",
  },
  schedulerGrpc: {
    type: 'list',
    env: 'CELLSCHED_SCHEDULER_GRPC',
    default: ['127.0.0.1:8780', '127.0.0.1:8781'],
    help: 'Scheduler gRPC replicas (host:port).',
  },
  schedulerDeadlineMs: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_DEADLINE_MS',
    default: 30000,
    min: 100,
    max: 600000,
    help: 'Per-attempt deadline of SelectDestinations.',
  },
  ...placementGrpcConfigSchema,
  ...placementUrlConfigSchema("Placement's REST endpoint (os-services: COMPUTE_STATUS_DISABLED)."),
  buildTimeoutMs: buildTimeoutOption("Build deadline of the first attempt (the cell conductor's watchdog reads it)."),
  discoverHostsInCellsIntervalMs: {
    type: 'int',
    env: 'CELLSCHED_DISCOVER_HOSTS_IN_CELLS_INTERVAL_MS',
    default: 10000,
    min: 0,
    max: 86400000,
    help: "Nova's [scheduler] discover_hosts_in_cells_interval (here in ms, in the super-conductor, which may write the API DB): map new compute hosts to their cells this often, so they become schedulable without discover_hosts by hand (0: off).",
  },
  allowResizeToSameHost: {
    type: 'bool',
    env: 'CELLSCHED_ALLOW_RESIZE_TO_SAME_HOST',
    default: false,
    help: "Nova's allow_resize_to_same_host: a resize may stay on the instance's host (the scheduler then keeps the source among the candidates).",
  },
  serviceDownTimeMs: serviceDownTimeOption(
    "Nova's service_down_time: a forced live migration's destination whose compute is silent longer is refused (Nova's ComputeServiceUnavailable).",
  ),
  // NOTE: a create spends ~150-200 ms here, mostly awaiting the scheduler: 32 at once capped the super-conductor near 180 creates/s
  prefetch: {
    type: 'int',
    env: 'CELLSCHED_CONDUCTOR_PREFETCH',
    default: 64,
    min: 1,
    max: 1000,
    help: 'Casts handled at once (each create awaits its scheduling decision, so this bounds creates/s to about prefetch / decision time).',
  },
  ...healthFileConfigSchema,
  dbPoolSize: {
    type: 'int',
    env: 'CELLSCHED_SUPER_CONDUCTOR_DB_POOL',
    default: 10,
    min: 1,
    max: 500,
    help: 'PostgreSQL connections per database (API DB and each cell DB).',
  },
});

export type SuperConductorConfig = Config<typeof superConductorConfigSchema>;
