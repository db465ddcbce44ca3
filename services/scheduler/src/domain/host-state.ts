import type { AllocationCandidate } from '@cellsched/wire';

/** A Nova host aggregate as the scheduler sees it: metadata drives AZs, tenant isolation and extra-spec matching. */
export interface HostAggregate {
  readonly uuid: string;
  readonly name: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/** One `(architecture, hypervisor_type, vm_mode)` triple a compute node advertises (Nova's supported_instances). */
export interface SupportedInstance {
  readonly arch: string;
  readonly hvType: string;
  readonly vmMode: string;
}

/**
 * What the cells' `compute_nodes` and `services` records say about one compute node, read-only.
 * The uuid is the compute node's root resource provider uuid in placement.
 */
export interface ComputeNodeRecord {
  readonly uuid: string;
  /** The nova-compute service host name (Nova's `host`): server groups reason about it. */
  readonly host: string;
  readonly nodename: string;
  readonly cellUuid: string;
  /** The cell is disabled (`cell_v2 update_cell --disable`): no new builds go there unless the request names that cell. */
  readonly cellDisabled: boolean;
  readonly serviceDisabled: boolean;
  readonly serviceDisabledReason: string;
  readonly forcedDown: boolean;
  /** Last service heartbeat; undefined when the service never reported. */
  readonly lastHeartbeatAt: Date | undefined;
  readonly aggregates: readonly HostAggregate[];
  readonly hypervisorType: string;
  /** Nova's integer hypervisor_version (e.g. 6002000 for 6.2.0). */
  readonly hypervisorVersion: number;
  readonly supportedInstances: readonly SupportedInstance[];
  /** Instances building, resizing, migrating, ... on the node (Nova's num_io_ops). */
  readonly numIoOps: number;
  /** Consecutive recent build failures on the node (reset by a success). */
  readonly failedBuilds: number;
  /** Nova's vcpus / vcpus_used of the compute node (what the compute reported, not placement's usage). */
  readonly vcpus: number;
  readonly vcpusUsed: number;
  /** Nova's memory_mb / memory_mb_used. */
  readonly memoryMb: number;
  readonly memoryMbUsed: number;
  /** Nova's local_gb / local_gb_used. */
  readonly localGb: number;
  readonly localGbUsed: number;
  /** Nova's stats as the compute reported them, e.g. `{ num_instances: "3", io_workload: "1" }`. */
  readonly stats: Readonly<Record<string, string>>;
  /** Nova's cpu_info, parsed once when the record is built (`{}` when absent or not a JSON object). */
  readonly cpuInfo: Readonly<Record<string, unknown>>;
}

/** Capacity and usage of one resource class on one provider, from placement's provider summaries. */
export interface ResourceUsage {
  capacity: number;
  used: number;
}

/**
 * Nova's HostState: one compute node as one decision sees it, a private mutable copy built per
 * request (so in-request consumption never leaks into another request or into the adapter's cache).
 */
export interface HostState {
  readonly record: ComputeNodeRecord;
  readonly availabilityZone: string;
  /** Allocation candidates placement returned whose root provider is this node, in placement's order. */
  allocationCandidates: AllocationCandidate[];
  /** provider uuid -> resource class -> capacity/used, for every provider named by the candidates. */
  readonly providers: Map<string, Map<string, ResourceUsage>>;
  /** Instances placed on the node by this request so far. */
  numInstancesAdded: number;
  /** Mutable like Nova's: in-request consumption bumps it. */
  numIoOps: number;
}

/** Free amount of a resource class on the host's root provider (capacity minus usage), 0 if absent. */
export function freeOnRoot(host: HostState, resourceClass: string): number {
  const usage = host.providers.get(host.record.uuid)?.get(resourceClass);
  return usage === undefined ? 0 : usage.capacity - usage.used;
}

/** True when every amount of the candidate still fits what this request has left of each provider. */
export function candidateFits(host: HostState, candidate: AllocationCandidate): boolean {
  return candidate.allocations.every((a) =>
    Object.entries(a.resources).every(([rc, amount]) => {
      const usage = host.providers.get(a.resourceProviderUuid)?.get(rc);
      return usage === undefined || usage.used + amount <= usage.capacity;
    }),
  );
}

/**
 * Nova's consume_from_request: after a successful claim, charge the claimed amounts to the
 * in-memory providers so the next instance of the same request sees them.
 */
export function consumeFromRequest(host: HostState, claimed: AllocationCandidate): void {
  for (const a of claimed.allocations) {
    for (const [rc, amount] of Object.entries(a.resources)) {
      const usage = host.providers.get(a.resourceProviderUuid)?.get(rc);
      if (usage !== undefined) usage.used += amount;
    }
  }
  host.numInstancesAdded += 1;
  host.numIoOps += 1;
}

/** The first of the host's candidates that still fits, or undefined. */
export function firstFittingCandidate(host: HostState): AllocationCandidate | undefined {
  return host.allocationCandidates.find((c) => candidateFits(host, c));
}
