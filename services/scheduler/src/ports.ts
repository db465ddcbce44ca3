/**
 * The ports of the scheduler's domain core: everything it needs from the outside world, and
 * nothing else. The domain imports no I/O library; adapters (placement gRPC client, cell-DB host
 * cache, PostgreSQL advisory lock, system clock) implement these interfaces.
 *
 * Shared rule, after kubernetes' framework: an outcome the scheduler plans for (no capacity, a
 * lost race) is a *value*; a thrown error means something is broken (placement unreachable,
 * bad data) and aborts the request after the core has released the claims it made.
 */
import type { AllocationCandidate, GetAllocationCandidatesRequest, GetAllocationCandidatesResponse, InstanceGroup } from '@cellsched/wire';
import type { ClaimOutcome } from '@cellsched/placement-client';
import type { ComputeNodeRecord, HostAggregate } from './domain/host-state';

export type { ComputeNodeRecord, HostAggregate, SupportedInstance } from './domain/host-state';

/**
 * A read-only view of the cloud for one decision (Nomad's state snapshot): placement's
 * candidates and summaries, the cells' compute-node and service records, aggregates, and where a
 * server group's members hold claims.
 *
 * Every method is a read: idempotent, safe to retry, writes nothing. Results may be stale (a
 * cache); the claim in placement is the single source of truth, so staleness costs a failed
 * claim, never a wrong placement. Methods throw only on infrastructure failure.
 */
export interface HostStateSnapshot {
  /**
   * Placement's `GET /allocation_candidates` for the query (gRPC GetAllocationCandidates).
   * An empty answer is a normal result. Throws on transport errors or `INVALID_ARGUMENT`.
   * The adapter may answer from a short-lived copy (Omega's scheduler-side state) unless
   * `fresh` is set: the core asks for a fresh read after placement refused a claim, when its
   * view is known to be stale.
   */
  getAllocationCandidates(
    query: GetAllocationCandidatesRequest,
    options?: { readonly fresh?: boolean },
  ): Promise<GetAllocationCandidatesResponse>;
  /**
   * Compute node + service records for the given compute node (root provider) uuids, from every
   * cell. Unknown uuids are simply absent from the map (a node placement knows but the cache does
   * not yet, a deleted node, or a node whose host has no host mapping to its cell — not discovered
   * yet: the core drops it and says so in the diagnosis). Must not scan every cell per call.
   */
  getComputeNodes(uuids: readonly string[]): Promise<ReadonlyMap<string, ComputeNodeRecord>>;
  /** Every host aggregate with its metadata (AZ and tenant request filters read it). */
  getAggregates(): Promise<readonly HostAggregate[]>;
  /**
   * Service host -> how many members of the group hold a claim there, read fresh (not from a
   * cache): the core calls it while holding the group's lock, so the answer must include every
   * claim made by decisions that held the lock before, on any replica. Members in `exclude` are
   * not counted (Nova's `InstanceGroup.get_hosts(exclude=...)`: a moving instance is not its own
   * neighbour).
   */
  getGroupMemberHosts(group: InstanceGroup, exclude?: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /**
   * The service hosts on which any of these instances holds a claim, read fresh (the
   * `same_host` / `different_host` hints: Nova's host_state.instances). An unknown or unplaced
   * instance is on no host. Read-only.
   */
  getInstanceHosts(instanceUuids: readonly string[]): Promise<ReadonlySet<string>>;
}

/** A server group whose policy placement keeps atomically with a claim. */
export interface ClaimGroup {
  readonly uuid: string;
  /** Nova's policy name; placement enforces affinity and anti-affinity, not the soft-* ones. */
  readonly policy: string;
  /** Anti-affinity's `max_server_per_host` (>= 1). */
  readonly maxServerPerHost: number;
}

/** Who a claim is for (placement's consumer). */
export interface ClaimConsumer {
  readonly consumerUuid: string;
  readonly projectId: string;
  readonly userId: string;
  /** The consumer's server group: placement refuses a claim that would break its policy (`group_policy`). */
  readonly group?: ClaimGroup | undefined;
}

/**
 * The outcome of one claim attempt: placement-client's, the one type every caller of placement
 * shares. `claimed`; `conflict` (placement.concurrent_update: a concurrent write bumped a
 * generation) may succeed if tried again at once; `no_capacity`
 * (placement.allocation.capacity_exceeded) will not succeed on that host; `group_policy`
 * (placement.claim.group_policy) neither: the consumer's server group forbids that host given the
 * members' claims now (one made outside this decision's view, e.g. by a cell conductor's reschedule).
 */
export type { ClaimOutcome } from '@cellsched/placement-client';

/**
 * Writes and removes allocations in placement (Nomad's plan submitter). Placement enforces
 * capacity atomically; the scheduler never trusts its own arithmetic for that.
 */
export interface Claimer {
  /**
   * Writes all of the candidate's allocations for the consumer in one transaction (placement
   * ClaimRequest). With `replace`, whatever the consumer already held is replaced atomically, so
   * a retried SelectDestinations ends with one claim per consumer, never two: idempotent per
   * (consumer, candidate). Without it, a consumer that already holds allocations is a conflict.
   * With `consumer.group`, placement also keeps that group's policy. On `conflict`, `no_capacity` or
   * `group_policy` nothing was written. Throws on any other failure, in which
   * case the caller cannot know whether the write happened and must release the consumer.
   */
  claim(consumer: ClaimConsumer, candidate: AllocationCandidate, options: { readonly replace: boolean }): Promise<ClaimOutcome>;
  /**
   * A move's claim (placement ClaimMoveRequest, one transaction): the instance's current
   * allocations (the source) become `migrationUuid`'s unless that consumer holds some already,
   * and the instance consumer then holds the candidate's allocations (the destination). Idempotent
   * per (instance, migration, candidate): a retry only replaces the instance's destination. Same
   * outcomes as {@link claim} (nothing written on any of them); throws on any other failure, in
   * which case the caller cannot know whether the write happened and must {@link revertMove}.
   */
  claimMove(consumer: ClaimConsumer, candidate: AllocationCandidate, migrationUuid: string): Promise<ClaimOutcome>;
  /**
   * Undoes a move's claim (placement RevertMoveRequest, one transaction): the migration's
   * allocations become the instance's again and the migration holds nothing. Idempotent: a
   * migration holding nothing changes nothing. Safe to retry. Throws on infrastructure failure.
   */
  revertMove(instanceUuid: string, migrationUuid: string): Promise<void>;
  /**
   * Removes every allocation of these consumers (placement ReleaseRequest). Idempotent: a
   * consumer without allocations is fine. Safe to retry. Throws on infrastructure failure.
   */
  release(consumerUuids: readonly string[]): Promise<void>;
}

/**
 * Serializes decisions for one server group across every scheduler replica (the adapter: a
 * PostgreSQL advisory lock keyed by the group uuid). Without it two parallel boots could both
 * see an empty anti-affinity group and pick the same host.
 */
export interface GroupLock {
  /**
   * Runs `fn` while holding the group's exclusive lock and releases it when `fn` settles, whether
   * it resolved or threw; `fn`'s result or error is passed through. Waits for the lock (the
   * adapter bounds the wait and throws `scheduler.group_lock.timeout` past it). Not reentrant.
   */
  withLock<T>(groupUuid: string, fn: () => Promise<T>): Promise<T>;
}

/** The time source, so heartbeat ages (ComputeFilter) are reproducible in tests. */
export interface Clock {
  /** The current time. Never throws. */
  now(): Date;
}

/** Everything the core needs, in one object the composition root builds. */
export interface SchedulerPorts {
  readonly snapshot: HostStateSnapshot;
  readonly claimer: Claimer;
  readonly groupLock: GroupLock;
  readonly clock: Clock;
}
