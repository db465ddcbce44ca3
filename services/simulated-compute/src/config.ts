import { defineConfig } from '@cellsched/config';
import { healthFileConfigSchema, telemetryConfigSchema } from '@cellsched/telemetry';

/** The simulated compute's options, as data. It has no database credentials at all. */
export const simulatedComputeConfigSchema = defineConfig({
  ...telemetryConfigSchema,
  cell: { type: 'string', env: 'CELLSCHED_CELL_NAME', default: 'cell1', help: 'Cell name (part of the stable compute node uuids, logs).' },
  transportUrl: {
    type: 'url', env: 'CELLSCHED_CELL_TRANSPORT_URL', protocols: ['amqp:', 'amqps:'], secret: true,
    help: "RabbitMQ URL of this cell's vhost, with this cell's user.",
  },
  placementUrl: { type: 'url', env: 'CELLSCHED_PLACEMENT_URL', protocols: ['http:', 'https:'], default: 'http://127.0.0.1:8778', help: "Placement's REST endpoint." },
  hosts: { type: 'int', env: 'CELLSCHED_COMPUTE_HOSTS', default: 10, min: 1, max: 5000, help: 'How many hosts this process simulates.' },
  hostPrefix: { type: 'string', env: 'CELLSCHED_COMPUTE_HOST_PREFIX', default: 'compute-', help: 'Host names are <prefix><n>.' },
  firstHost: { type: 'int', env: 'CELLSCHED_COMPUTE_FIRST_HOST', default: 1, min: 0, max: 1000000, help: 'Number of the first host.' },
  vcpus: { type: 'int', env: 'CELLSCHED_COMPUTE_VCPUS', default: 16, min: 1, max: 100000, help: 'VCPUs per host.' },
  memoryMb: { type: 'int', env: 'CELLSCHED_COMPUTE_MEMORY_MB', default: 65536, min: 1, max: 100000000, help: 'RAM per host (MB).' },
  diskGb: { type: 'int', env: 'CELLSCHED_COMPUTE_DISK_GB', default: 1000, min: 0, max: 10000000, help: 'Local disk per host (GB).' },
  reservedHostMemoryMb: { type: 'int', env: 'CELLSCHED_RESERVED_HOST_MEMORY_MB', default: 512, min: 0, max: 100000000, help: "Nova's reserved_host_memory_mb." },
  cpuAllocationRatio: { type: 'float', env: 'CELLSCHED_CPU_ALLOCATION_RATIO', default: 4.0, min: 0.0001, max: 1000, help: "Nova's cpu_allocation_ratio." },
  ramAllocationRatio: { type: 'float', env: 'CELLSCHED_RAM_ALLOCATION_RATIO', default: 1.0, min: 0.0001, max: 1000, help: "Nova's ram_allocation_ratio." },
  diskAllocationRatio: { type: 'float', env: 'CELLSCHED_DISK_ALLOCATION_RATIO', default: 1.0, min: 0.0001, max: 1000, help: "Nova's disk_allocation_ratio." },
  traits: { type: 'list', env: 'CELLSCHED_COMPUTE_TRAITS', default: ['COMPUTE_NODE'], help: 'Traits reported on every host provider (CUSTOM_* are created).' },
  buildLatencyMs: { type: 'int', env: 'CELLSCHED_BUILD_LATENCY_MS', default: 200, min: 0, max: 3600000, help: 'How long a simulated spawn takes.' },
  stepLatencyMs: { type: 'int', env: 'CELLSCHED_STEP_LATENCY_MS', default: -1, min: -1, max: 3600000, help: 'How long a simulated instance step (power off, prep_resize, live_migration, ...) takes (-1: the build latency).' },
  heartbeatIntervalMs: { type: 'int', env: 'CELLSCHED_REPORT_INTERVAL_MS', default: 10000, min: 100, max: 600000, help: "Heartbeat period (Nova's report_interval)." },
  statsIntervalMs: {
    type: 'int', env: 'CELLSCHED_COMPUTE_STATS_INTERVAL_MS', default: 5000, min: 100, max: 600000,
    help: "How often the stats of hosts that changed (num_instances, io_workload, failed_builds) are written (Nova's resource tracker update).",
  },
  arch: { type: 'string', env: 'CELLSCHED_COMPUTE_ARCH', default: 'x86_64', help: "Every host's CPU architecture (supported_instances, cpu_info), unless hostArchs names another." },
  hostArchs: { type: 'list', env: 'CELLSCHED_COMPUTE_HOST_ARCHS', default: [], help: 'host=arch pairs: these hosts have another architecture (e.g. cell1-compute-3=aarch64).' },
  processName: {
    type: 'string', env: 'CELLSCHED_COMPUTE_PROCESS_NAME', default: '',
    help: "This process's name in the cell (letters, digits, '.', '_', ':', '-'): its queue is compute-pool.<cell>.<name>. Default <host prefix><first host>. Keep it across restarts.",
  },
  prefetch: { type: 'int', env: 'CELLSCHED_COMPUTE_PREFETCH', default: 256, min: 1, max: 10000, help: "Builds in flight in this process (its queue's prefetch), all hosts together." },
  placementConcurrency: { type: 'int', env: 'CELLSCHED_COMPUTE_PLACEMENT_CONCURRENCY', default: 16, min: 1, max: 256, help: 'Hosts reported to placement at a time at start-up.' },
  rescheduleRate: { type: 'float', env: 'CELLSCHED_BUILD_FAILURE_RATE', default: 0, min: 0, max: 1, help: 'Initial share of builds failing reschedulably.' },
  abortRate: { type: 'float', env: 'CELLSCHED_BUILD_ABORT_RATE', default: 0, min: 0, max: 1, help: 'Initial share of builds failing non-reschedulably.' },
  seed: { type: 'int', env: 'CELLSCHED_COMPUTE_SEED', default: 1, min: 0, max: 4294967295, help: 'Seed of the fault draws (printed at start).' },
  ...healthFileConfigSchema,
  controlPort: { type: 'int', env: 'CELLSCHED_COMPUTE_CONTROL_PORT', default: -1, min: -1, max: 65535, help: 'Loopback fault-injection port (0: any free port, -1: off).' },
});
