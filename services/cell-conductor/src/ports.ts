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
import type { OverdueInstanceTask } from '@cellsched/cell-db';
import type { ClaimOutcome } from '@cellsched/placement-client';
import type { BuildAndRunInstanceRequest, InstanceGroup, InstanceStepRequest, Selection, TerminateInstanceRequest } from '@cellsched/wire';
import type {
  ActionInstance,
  ActionSnapshot,
  ActionTask,
  InstanceChange,
  MigrationChange,
  MigrationView,
  NextStep,
  StepEvent,
  VmStateName,
} from './domain/actions/types';
import type { Fault, InstanceSnapshot } from './domain/build-attempt';
import type { BuildMove } from './domain/reschedule';

export type { Fault, InstanceSnapshot } from './domain/build-attempt';
export type { BuildMove } from './domain/reschedule';
export type { StuckBuild } from './domain/watchdog';
export type { ActionInstance, ActionSnapshot, ActionTask, MigrationView } from './domain/actions/types';

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
  claimSelection(
    consumer: ClaimConsumer,
    selection: Selection,
  ): Promise<ClaimOutcome | { readonly kind: 'invalid'; readonly message: string }>;
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
  recordEvent(
    inst: InstanceSnapshot,
    requestId: string,
    event: BuildEvent,
    host: string | null,
    outcome: { readonly ok: boolean; readonly details?: string },
  ): Promise<void>;
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
  /**
   * A build's success where it is the common case, without the lock's transaction: ACTIVE on its
   * host (as {@link BuildTransaction.activate}) with the create's `compute_build` event recorded
   * Success, atomically, only while the live row builds `attempt` on `host`. False: nothing
   * changed (deleted, moved on, settled), to be judged under the lock. Safe to rerun.
   */
  activateIfBuilding(a: {
    readonly instanceUuid: string;
    readonly host: string;
    readonly attempt: number;
    /** '' keeps the row's node. */
    readonly node: string;
    readonly launchedAt: Date;
    readonly requestId: string;
  }): Promise<boolean>;
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

// ---- The action state machines (issue 13: lifecycle actions and moves) ----

/**
 * Placement as the action flows need it, on top of the build's claimer (`claimSelection`: an
 * unshelve's alternate, a replace-claim; `release`). Every call is idempotent and safe to repeat;
 * expected failures are outcomes, transport errors throw.
 */
export interface MovePlacement extends InstanceClaimer {
  /**
   * ClaimMove: the instance's allocations become the Selection's, the migration keeping the source
   * (moved to it by the first destination's claim; an alternate only replaces the instance's). The
   * consumer's server group is kept atomically. Nothing is written on a failure outcome.
   */
  claimMove(
    consumer: ClaimConsumer,
    selection: Selection,
    migrationUuid: string,
  ): Promise<ClaimOutcome | { readonly kind: 'invalid'; readonly message: string }>;
  /** RevertMove: the migration's allocations become the instance's again, the migration holds nothing. A migration holding nothing changes nothing. */
  revertMove(instanceUuid: string, migrationUuid: string): Promise<void>;
}

/** The task row an action starts with. */
export interface NewActionTask {
  readonly requestId: string;
  readonly action: string;
  readonly next: NextStep;
  readonly deadlineAt: Date;
  readonly migrationUuid: string | null;
  readonly requestSpec: ActionTask['requestSpec'];
  readonly params: Readonly<Record<string, string>>;
  readonly priorVmState: VmStateName;
  readonly traceParent: string | null;
}

/**
 * The writes of one action decision, inside the transaction holding the instance's row lock. The
 * decision was judged on the locked snapshot, so these need no guard of their own but the task's
 * step guard (`advanceTask`). A rerun after a rollback writes the same once.
 */
export interface ActionTransaction {
  /** The row after (live only: the lock is held, so it is). */
  updateInstance(instanceUuid: string, change: InstanceChange): Promise<ActionInstance>;
  /** The migration after, or undefined when it does not exist. */
  updateMigration(uuid: string, change: MigrationChange): Promise<MigrationView | undefined>;
  /** Ends a migration that is not over yet as `error` (a deleted instance's). Idempotent. */
  endMigration(uuid: string): Promise<void>;
  /** Not idempotent alone: written with the guarded change it explains (the same decision). */
  addFault(
    instanceUuid: string,
    fault: { readonly message: string; readonly host: string | null; readonly details: string | null },
  ): Promise<void>;
  /** A finished event of the request's instance action (created if missing). Idempotent per (action, event, host). */
  recordEvent(inst: ActionInstance, requestId: string, action: string, event: StepEvent): Promise<void>;
  /** Marks the instance action finished. Idempotent. */
  finishAction(instanceUuid: string, requestId: string): Promise<void>;
  startTask(instanceUuid: string, task: NewActionTask): Promise<void>;
  /** Moves the task on if still at `from` (request, step, host, attempt); the task after, or undefined. */
  advanceTask(
    instanceUuid: string,
    from: ActionTask,
    next: NextStep & { readonly deadlineAt: Date; readonly enteredBy: string },
  ): Promise<ActionTask | undefined>;
  endTask(instanceUuid: string, requestId: string): Promise<void>;
}

/** A task whose step the watchdog fails (read without a lock); `migrationUuid` is '' for an action without a migration. */
export type OverdueTask = Omit<OverdueInstanceTask, 'migrationUuid' | 'hostDown'> & { readonly migrationUuid: string };

/** The cell database as the action flows see it. */
export interface ActionRepository {
  /**
   * Runs `fn` in one transaction holding the instance's row lock, with the snapshot (the live row,
   * its task, the task's migration or else `o.migrationUuid`'s, whether `o.requestId`'s action is
   * finished); undefined when the instance is gone. Commits when `fn` resolves. Safe to rerun.
   */
  withLockedAction<T>(
    instanceUuid: string,
    o: { readonly requestId: string; readonly migrationUuid: string },
    fn: (snap: ActionSnapshot | undefined, tx: ActionTransaction, migration: MigrationView | undefined) => Promise<T>,
  ): Promise<T>;
  /** Tasks whose step is past its deadline, or on a host that is gone (see cell-db's listOverdueInstanceTasks). Read-only. */
  overdueTasks(o: { readonly serviceDownTimeMs: number; readonly limit: number }): Promise<OverdueTask[]>;
  /** Evacuations `done` whose source is one of `hosts`, with their live instance (undefined: gone). Read-only. */
  evacuationsAwaitingSource(
    hosts: readonly string[],
  ): Promise<{ readonly migration: MigrationView; readonly instance: ActionInstance | undefined }[]>;
  /** Resizes and cold migrations waiting in VERIFY_RESIZE longer than `windowMs`, with their instance's user and project. Read-only. */
  unconfirmedResizes(
    windowMs: number,
  ): Promise<{ readonly migration: MigrationView; readonly userId: string; readonly projectId: string }[]>;
  /** Migrations not over whose instance is deleted. Read-only. */
  migrationsOfDeletedInstances(limit: number): Promise<MigrationView[]>;
  getMigration(uuid: string): Promise<MigrationView | undefined>;
  /**
   * The instance's resize or cold migration waiting for confirm or revert (Nova's
   * `Migration.get_by_instance_and_status(…, 'finished')`; `confirming` / `reverting` too, for a
   * repeat): its uuid, or undefined. Read-only.
   */
  resizeMigrationOf(instanceUuid: string): Promise<string | undefined>;
  /** Sets the migration's status if it is `expected` now; whether it did. */
  setMigrationStatus(uuid: string, status: string, expected: readonly string[]): Promise<boolean>;
  /** Ends a migration that is not over as `error`. Idempotent. */
  endMigration(uuid: string): Promise<void>;
}

/** Casts of the action flows: a step to `compute.<host>`, a terminate of a stray guest. See {@link ComputeCaster}. */
export interface StepCaster {
  instanceStep(host: string, request: InstanceStepRequest): Promise<CastResult>;
  terminateInstance(host: string, request: TerminateInstanceRequest): Promise<CastResult>;
}

/** Everything the action flows need. */
export interface ActionPorts {
  readonly actions: ActionRepository;
  readonly placement: MovePlacement;
  readonly compute: StepCaster;
  readonly clock: Clock;
  /** A step with no result this long after it was cast has failed (the step watchdog). */
  readonly stepTimeoutMs: number;
}
