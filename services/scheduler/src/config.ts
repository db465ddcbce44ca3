import { apiDbUrlOption, type Config, defineConfig } from '@cellsched/config';
import { telemetryConfigSchema } from '@cellsched/telemetry';
import { DEFAULT_POLICY, type SchedulerPolicy } from './domain/policy';

const MULTIPLIERS = [
  'ram_weight_multiplier',
  'cpu_weight_multiplier',
  'disk_weight_multiplier',
  'io_ops_weight_multiplier',
  'build_failure_weight_multiplier',
  'soft_affinity_weight_multiplier',
  'soft_anti_affinity_weight_multiplier',
  'cross_cell_move_weight_multiplier',
] as const;

/**
 * The scheduler's options, as data (help text and defaults); loaded by main.ts and tracing.ts.
 * Only the API database and the scheduler's own read-only credentials are configured here;
 * the cells come from the API database (cell_mapping_endpoints), followed at every host-cache
 * refresh. Policy options carry Nova's names.
 */
export const schedulerConfigSchema = defineConfig({
  apiDbUrl: apiDbUrlOption(
    "PostgreSQL URL of the API database, as the scheduler's read-only role (aggregates, server groups, cell_mapping_endpoints).",
  ),
  cellDbUser: {
    type: 'string',
    env: 'CELLSCHED_SCHEDULER_CELL_DB_USER',
    required: true,
    help: "The scheduler's read-only PostgreSQL role on the cell DBs (SELECT on services and compute_nodes), put into each cell mapping's URL.",
  },
  cellDbPassword: {
    type: 'string',
    env: 'CELLSCHED_SCHEDULER_CELL_DB_PASSWORD',
    default: '',
    secret: true,
    help: 'Password of cellDbUser.',
  },
  host: { type: 'string', env: 'CELLSCHED_SCHEDULER_HOST', default: '127.0.0.1', help: 'Address the gRPC SchedulerService listens on.' },
  basePort: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_BASE_PORT',
    default: 8780,
    min: 0,
    max: 65535,
    help: 'gRPC port of replica 0; replica i listens on basePort + i (0: any free port).',
  },
  replicaIndex: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_REPLICA',
    default: 0,
    min: 0,
    max: 1000,
    help: 'Index of this replica (several processes: 0, 1, 2, ...).',
  },
  placementAddresses: {
    type: 'list',
    env: 'CELLSCHED_PLACEMENT_GRPC_ADDRESSES',
    default: ['127.0.0.1:8779'],
    help: 'host:port of the placement gRPC replicas.',
  },
  placementDeadline: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_PLACEMENT_DEADLINE',
    default: '10s',
    help: 'Deadline of one placement call.',
  },
  dbPoolSize: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_DB_POOL',
    default: 4,
    min: 1,
    max: 200,
    help: 'PostgreSQL connections per database (API DB and each cell DB).',
  },
  hostCacheRefresh: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_HOST_REFRESH',
    default: '1s',
    help: 'Age after which a request triggers an incremental refresh of the host cache (by updated_at).',
  },
  hostCacheOverlap: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_HOST_OVERLAP',
    default: '2s',
    help: 'How far each incremental host-cache read looks back before the previous one (writes committed that long after their transaction began are still seen; the full resync catches later ones).',
  },
  hostCacheFullResync: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_HOST_RESYNC',
    default: '5m',
    help: 'Period of the full reload of the host cache (catches writes the incremental cursor missed).',
  },
  candidateCacheTtl: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_CANDIDATE_CACHE_TTL',
    default: '5s',
    help: "Longest a replica reuses placement's candidates answer for the same query, charging its own claims to it (0: ask every time; a refused claim always re-reads).",
  },
  candidateCacheRefresh: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_CANDIDATE_CACHE_REFRESH',
    default: '2s',
    help: 'Age past which a cached candidates answer is refreshed in the background while it keeps answering (at most one fetch per query in flight).',
  },
  maxConcurrentDecisions: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_MAX_CONCURRENT_DECISIONS',
    default: 16,
    min: 1,
    max: 10000,
    help: "Decisions one replica runs at once (Nova's scheduler workers); more wait in arrival order, so a burst does not queue claims at placement past their deadline.",
  },
  groupLockTimeout: {
    type: 'duration',
    env: 'CELLSCHED_SCHEDULER_GROUP_LOCK_TIMEOUT',
    default: '10s',
    help: 'Longest wait for a server group lock (scheduler.group_lock.timeout past it).',
  },
  enabledFilters: {
    type: 'list',
    env: 'CELLSCHED_SCHEDULER_ENABLED_FILTERS',
    default: DEFAULT_POLICY.enabledFilters,
    help: "Nova's [filter_scheduler] enabled_filters, run in this order.",
  },
  weightClasses: {
    type: 'list',
    env: 'CELLSCHED_SCHEDULER_WEIGHT_CLASSES',
    default: DEFAULT_POLICY.enabledWeighers,
    help: "Nova's [filter_scheduler] weight_classes.",
  },
  ramWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_RAM_WEIGHT_MULTIPLIER',
    help: 'Nova ram_weight_multiplier (default 1.0: spread).',
  },
  cpuWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_CPU_WEIGHT_MULTIPLIER',
    help: 'Nova cpu_weight_multiplier (default 1.0).',
  },
  diskWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_DISK_WEIGHT_MULTIPLIER',
    help: 'Nova disk_weight_multiplier (default 1.0).',
  },
  ioOpsWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_IO_OPS_WEIGHT_MULTIPLIER',
    help: 'Nova io_ops_weight_multiplier (default -1.0).',
  },
  buildFailureWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_BUILD_FAILURE_WEIGHT_MULTIPLIER',
    help: 'Nova build_failure_weight_multiplier (default 1e6).',
  },
  softAffinityWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_SOFT_AFFINITY_WEIGHT_MULTIPLIER',
    help: 'Nova soft_affinity_weight_multiplier (default 1.0).',
  },
  softAntiAffinityWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_SOFT_ANTI_AFFINITY_WEIGHT_MULTIPLIER',
    help: 'Nova soft_anti_affinity_weight_multiplier (default 1.0).',
  },
  crossCellMoveWeightMultiplier: {
    type: 'float',
    env: 'CELLSCHED_SCHEDULER_CROSS_CELL_MOVE_WEIGHT_MULTIPLIER',
    help: 'Nova cross_cell_move_weight_multiplier (default 1e6: a move that may cross cells stays in its cell; negative: prefers other cells).',
  },
  hostSubsetSize: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_HOST_SUBSET_SIZE',
    default: DEFAULT_POLICY.hostSubsetSize,
    min: 1,
    help: 'Nova host_subset_size: pick at random among the best N hosts.',
  },
  hostSampleSize: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_HOST_SAMPLE_SIZE',
    default: 50,
    min: 0,
    help: 'Ours (Nomad-style scoring limit): a single-instance request without server group weighs a random sample of this many candidate hosts, and all of them only if none of the sample can be claimed (0: weigh every candidate, as Nova).',
  },
  shuffleBestSameWeighedHosts: {
    type: 'bool',
    env: 'CELLSCHED_SCHEDULER_SHUFFLE_BEST_SAME_WEIGHED_HOSTS',
    default: false,
    help: 'Nova shuffle_best_same_weighed_hosts.',
  },
  maxPlacementResults: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_MAX_PLACEMENT_RESULTS',
    default: DEFAULT_POLICY.maxPlacementResults,
    min: 1,
    help: 'Nova [scheduler] max_placement_results: candidates asked of placement (placement samples them at random).',
  },
  serviceDownTime: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_SERVICE_DOWN_TIME',
    default: DEFAULT_POLICY.serviceDownTimeSeconds,
    min: 1,
    help: 'Nova service_down_time in seconds.',
  },
  defaultAvailabilityZone: {
    type: 'string',
    env: 'CELLSCHED_SCHEDULER_DEFAULT_AZ',
    default: DEFAULT_POLICY.defaultAvailabilityZone,
    help: 'Nova default_availability_zone.',
  },
  limitTenantsToPlacementAggregate: {
    type: 'bool',
    env: 'CELLSCHED_SCHEDULER_LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE',
    default: false,
    help: 'Nova [scheduler] limit_tenants_to_placement_aggregate.',
  },
  placementAggregateRequiredForTenants: {
    type: 'bool',
    env: 'CELLSCHED_SCHEDULER_PLACEMENT_AGGREGATE_REQUIRED_FOR_TENANTS',
    default: false,
    help: 'Nova [scheduler] placement_aggregate_required_for_tenants.',
  },
  queryPlacementForAvailabilityZone: {
    type: 'bool',
    env: 'CELLSCHED_SCHEDULER_QUERY_PLACEMENT_FOR_AZ',
    default: true,
    help: 'Nova [scheduler] query_placement_for_availability_zone.',
  },
  queryPlacementForImageTypeSupport: {
    type: 'bool',
    env: 'CELLSCHED_SCHEDULER_QUERY_PLACEMENT_FOR_IMAGE_TYPE',
    default: false,
    help: 'Nova [scheduler] query_placement_for_image_type_support.',
  },
  claimConflictRetries: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_CLAIM_CONFLICT_RETRIES',
    default: DEFAULT_POLICY.claimConflictRetries,
    min: 0,
    max: 100,
    help: 'Tight retries of one host after placement.concurrent_update.',
  },
  decisionLogInterval: {
    type: 'int',
    env: 'CELLSCHED_SCHEDULER_DECISION_LOG_INTERVAL_MS',
    default: 60_000,
    min: 0,
    help: 'How often the replica logs its decisions (count, p50/p99 ms, claim conflict retries, totals since start); 0: never.',
  },
  // the same telemetry and logging options as every service (exporter, sampling, span file rotation, log level)
  ...telemetryConfigSchema,
});

export type SchedulerConfig = Config<typeof schedulerConfigSchema>;

type MultiplierKey =
  | 'ramWeightMultiplier'
  | 'cpuWeightMultiplier'
  | 'diskWeightMultiplier'
  | 'ioOpsWeightMultiplier'
  | 'buildFailureWeightMultiplier'
  | 'softAffinityWeightMultiplier'
  | 'softAntiAffinityWeightMultiplier'
  | 'crossCellMoveWeightMultiplier';
const MULTIPLIER_KEYS: readonly MultiplierKey[] = [
  'ramWeightMultiplier',
  'cpuWeightMultiplier',
  'diskWeightMultiplier',
  'ioOpsWeightMultiplier',
  'buildFailureWeightMultiplier',
  'softAffinityWeightMultiplier',
  'softAntiAffinityWeightMultiplier',
  'crossCellMoveWeightMultiplier',
];

/** The domain's SchedulerPolicy from loaded options (unset multipliers keep the weigher's default). Validated by SchedulerCore. */
export function policyFromConfig(c: SchedulerConfig): SchedulerPolicy {
  const weightMultipliers: Record<string, number> = {};
  MULTIPLIER_KEYS.forEach((key, i) => {
    const v = c[key];
    if (v !== undefined) weightMultipliers[MULTIPLIERS[i] as string] = v;
  });
  return {
    enabledFilters: [...c.enabledFilters],
    enabledWeighers: [...c.weightClasses],
    weightMultipliers,
    hostSubsetSize: c.hostSubsetSize,
    hostSampleSize: c.hostSampleSize,
    shuffleBestSameWeighedHosts: c.shuffleBestSameWeighedHosts,
    maxPlacementResults: c.maxPlacementResults,
    serviceDownTimeSeconds: c.serviceDownTime,
    defaultAvailabilityZone: c.defaultAvailabilityZone,
    limitTenantsToPlacementAggregate: c.limitTenantsToPlacementAggregate,
    placementAggregateRequiredForTenants: c.placementAggregateRequiredForTenants,
    queryPlacementForAvailabilityZone: c.queryPlacementForAvailabilityZone,
    queryPlacementForImageTypeSupport: c.queryPlacementForImageTypeSupport,
    claimConflictRetries: c.claimConflictRetries,
  };
}
