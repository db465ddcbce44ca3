/**
 * The ports of the cell conductor's domain core (src/domain): everything its build decisions need
 * from the outside world, and nothing else. Adapters implement them: the cell DB repository
 * (adapters/build-repository.ts), placement (adapters/placement-claimer.ts), the cell bus
 * (adapters/compute-caster.ts). The domain imports no I/O library.
 *
 * Shared rule, as in the scheduler's ports: an outcome the conductor plans for (no capacity, a
 * guard that no longer holds, a cast nobody serves) is a *value*; a thrown error means a dependency
 * is broken (placement, PostgreSQL or the bus unavailable). Every flow that throws is rerun whole by
 * the cast's in-delivery retry or the bus's redelivery, so each port says whether it is safe to repeat.
 */
import type { ClaimOutcome } from '@cellsched/placement-client';
import type { BuildAndRunInstanceRequest, InstanceGroup, Selection, TerminateInstanceRequest } from '@cellsched/wire';
import type { Fault, InstanceSnapshot } from './domain/build-attempt';
import type { BuildMove } from './domain/reschedule';

export type { Fault, InstanceSnapshot } from './domain/build-attempt';
export type { BuildMove } from './domain/reschedule';
export type { StuckBuild } from './domain/watchdog';

/** Who consumes the allocations (the instance), as placement records it. */
export interface ClaimConsumer {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  /**
   * The instance's server group (from its RequestSpec), if any: placement then keeps the group's
   * policy atomically with the claim, against every member's current allocations (members created
   * after this request included), so an alternate another member took meanwhile is refused.
   */
  readonly group?: InstanceGroup | undefined;
}

/**
 * Claims in placement for the in-cell retry. `claimSelection` writes the Selection's opaque
 * allocation request for the consumer **replacing** whatever it holds (one atomic write: the
 * failed host's allocation moves to the alternate, never a window holding nothing, never two
 * claims). Idempotent, safe to repeat. Expected failures are outcomes (`group_policy`: the
 * consumer's server group forbids that host; `invalid`: the Selection's allocation request cannot be
 * read; nothing written either way); transport errors throw.
 */
export interface InstanceClaimer {
  claimSelection(consumer: ClaimConsumer, selection: Selection): Promise<ClaimOutcome | { readonly kind: 'invalid'; readonly message: string }>;
  /** Deletes the consumer's allocations. Idempotent, safe to repeat. */
  release(consumerUuid: string): Promise<void>;
}

/** The instance-action events the build decisions record (the adapter maps them to Nova's event names). */
export type BuildEvent = 'compute_build' | 'reschedule';

/**
 * Records the steps of an instance's `create` action (Nova's instance actions), inside the
 * transaction of the decision. Idempotent per (action, event, host): a rerun records nothing twice.
 */
export interface ActionRecorder {
  /** A finished event (Success, or Error with `details`); a missing `create` action is created. Nothing with no request id. */
  recordEvent(inst: InstanceSnapshot, requestId: string, event: BuildEvent, host: string | null, outcome: { readonly ok: boolean; readonly details?: string }): Promise<void>;
  /** The request id of the instance's `create` action ('' when there is none). Read-only. */
  createRequestId(instanceUuid: string): Promise<string>;
}

/**
 * The writes of one build decision, inside the transaction that holds the instance's row lock.
 * Each is guarded on `vm_state = building` (false / undefined: the guard failed, nothing written),
 * so a rerun of the same decision after a rollback writes the same thing once.
 */
export interface BuildTransaction extends ActionRecorder {
  /** Points the build at its next host (`task_state` scheduling, the attempt, alternates, deadline). The row after. */
  moveBuild(instanceUuid: string, move: BuildMove): Promise<InstanceSnapshot | undefined>;
  /** ERROR with the fault (written with the guarded update); `clearHost` also clears host and node (no host holds it). */
  failBuild(instanceUuid: string, fault: Fault, options: { readonly clearHost: boolean }): Promise<boolean>;
  /** ACTIVE on its host (power on, task none, node, launched_at, retry state cleared). */
  activate(instanceUuid: string, change: { readonly node: string | null; readonly launchedAt: Date }): Promise<boolean>;
}

/** The cell database as the build decisions see it. */
export interface BuildRepository {
  /**
   * Runs `fn` in one transaction holding the instance's row lock (`SELECT … FOR UPDATE`), with the
   * locked row (`undefined`: no live row: deleted). Commits when `fn` resolves, rolls back when it
   * throws (no lock is held after). Every report about one instance takes this lock first, so a
   * compute's late report, a reschedule and the watchdog run one after another. Safe to rerun.
   */
  withLockedInstance<T>(instanceUuid: string, fn: (inst: InstanceSnapshot | undefined, tx: BuildTransaction) => Promise<T>): Promise<T>;
}

/** A cast's fate: queued, or refused by the broker because no queue is bound to `compute.<host>` (nothing queued). */
export type CastResult = 'sent' | 'unroutable';

/**
 * Casts to the cell's computes (`compute.<host>`). At-least-once: a cast may arrive twice; the
 * compute dedups a build by (host, instance, attempt) and a terminate is idempotent, so repeating a
 * cast is safe. Throws when the bus cannot take it now (unavailable, unconfirmed: retryable).
 */
export interface ComputeCaster {
  buildAndRunInstance(host: string, request: BuildAndRunInstanceRequest): Promise<CastResult>;
  terminateInstance(host: string, request: TerminateInstanceRequest): Promise<CastResult>;
}

/** The time source (build deadlines, launched_at), so decisions are reproducible in tests. */
export interface Clock {
  now(): Date;
}

/** Where the flows say what they did (a pino logger fits; the adapters bind the cast's fields). */
export interface BuildLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Everything the build flows need, in one object the composition root builds. */
export interface BuildPorts {
  readonly instances: BuildRepository;
  readonly claimer: InstanceClaimer;
  readonly compute: ComputeCaster;
  readonly clock: Clock;
  /** How long a build may stay in `building` on one host before the watchdog looks at it. */
  readonly buildTimeoutMs: number;
}

/**
 * Placement as the retirement of hosts needs it (the REST report client implements it): remove a
 * retired compute node's provider tree, or keep it out of every allocation candidate while
 * allocations of instances still there hold it. Both idempotent; transport errors throw.
 */
export interface RetiredProviders {
  /** `in_use`: placement refused (allocations remain); nothing is deleted that holds them. */
  deleteResourceProvider(uuid: string): Promise<'deleted' | 'absent' | 'in_use'>;
  /** Sets COMPUTE_STATUS_DISABLED (the scheduler's placement query forbids it). */
  setComputeStatusDisabled(uuid: string, disabled: boolean): Promise<void>;
}
