/**
 * The ports of the super-conductor's domain core (src/domain): the scheduler, placement's release,
 * and one cell's bus and database as a build needs them. Adapters implement them
 * (adapters/scheduler-selector.ts, adapters/cell-ports.ts). The domain imports no I/O library.
 * An outcome the super-conductor plans for (NoValidHost, a cast nobody serves, a guard that no
 * longer holds) is a value; a thrown error is a dependency that is down, and the whole cast is
 * rerun (in-delivery retry, then redelivery), so each port says whether it is safe to repeat.
 */
import type {
  BuildAndRunInstanceRequest,
  BuildInstancesRequest,
  Failure,
  Flavor,
  InstanceActionRequest,
  MoveContext,
  RequestSpec,
  Selection,
  TerminateInstanceRequest,
} from '@cellsched/wire';

/** The outcome of one SelectDestinations call; transport errors worth a redelivery throw instead. */
export type SelectOutcome =
  | { readonly kind: 'selected'; readonly destinations: readonly (readonly Selection[])[] }
  /** NoValidHost (the scheduler released every claim of the request). */
  | { readonly kind: 'no_valid_host'; readonly failure: Failure }
  /** Any other non-retryable failure: the instances are buried in cell0 with it. */
  | { readonly kind: 'failed'; readonly failure: Failure };

/**
 * The scheduler, as the super-conductor sees it. `selectDestinations` claims in placement
 * (replace semantics per consumer, so a repeat for the same instances does not double a
 * claim) and returns one list per instance: the chosen host first, then `numAlternates`
 * alternates in the same cell. Throws when the call may succeed if retried later.
 */
export interface DestinationSelector {
  /**
   * With `move` (one instance): a move's selection, the chosen host claimed with placement's
   * ClaimMove (the source allocation goes to the migration consumer in the same write); a
   * NoValidHost reverts the move (the instance holds its source again). Idempotent per
   * (instance, migration): a repeat only replaces the destination.
   */
  selectDestinations(
    spec: RequestSpec,
    instanceUuids: readonly string[],
    numAlternates: number,
    move?: MoveContext,
  ): Promise<SelectOutcome>;
}

/** Releases consumers' allocations in placement. Idempotent. */
export interface ClaimReleaser {
  release(consumerUuids: readonly string[]): Promise<void>;
}

/** A cast's fate: queued, or refused by the broker because no queue is bound to its key (nothing queued). */
export type CastResult = 'sent' | 'unroutable';

/**
 * One cell's bus, as the super-conductor casts into it. At-least-once: a cast may arrive twice, and
 * its receiver dedups (the compute by host, instance and attempt; the cell conductor by host and
 * attempt), so repeating one is safe. Throws when the bus cannot take it now (retryable).
 */
export interface CellCaster {
  /** `build_and_run_instance` to `compute.<host>`; `unroutable`: no compute serves that host. */
  buildAndRunInstance(host: string, request: BuildAndRunInstanceRequest): Promise<CastResult>;
  /** `build_instances` to the cell conductor; `unroutable`: the cell has no conductor queue (or no bus). */
  buildInstances(request: BuildInstancesRequest): Promise<CastResult>;
  /** `terminate_instance` to `compute.<host>`; `unroutable` is done: no compute serves that host, so no guest runs there. */
  terminateInstance(host: string, request: TerminateInstanceRequest): Promise<CastResult>;
}

/** One cell's database, as a build the super-conductor gives up on writes it. */
export interface CellBuildRecords {
  /**
   * In one transaction, guarded on the instance still building on `host`: ERROR, the fault, and the
   * create action's compute-build event in Error (when there is a request id). False: the guard
   * failed, nothing written. Idempotent.
   */
  failBuild(
    instanceUuid: string,
    host: string,
    requestId: string,
    fault: { readonly message: string; readonly details: string },
  ): Promise<boolean>;
}

/** What a build in one cell needs. */
export interface CellBuildPorts {
  readonly cell: CellCaster;
  readonly builds: CellBuildRecords;
  readonly claims: ClaimReleaser;
}

/** Where the domain says what it did (a pino logger fits; the adapters bind the cast's fields). */
export interface ConductorLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** An instance as a server action sees it in its cell (the fields the action's plan reads). */
export interface ActionInstance {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  readonly vmState: string;
  readonly taskState: string | null;
  readonly host: string | null;
  readonly node: string | null;
  readonly flavor: Flavor;
  /** A resize waiting in VERIFY_RESIZE: the flavor before it (undefined otherwise). */
  readonly oldFlavor: Flavor | undefined;
  readonly imageRef: string | null;
  readonly availabilityZone: string | null;
  /**
   * Unshelve and moves: the host list (chosen host first, then the alternates) a previous delivery of
   * this request selected (empty: none yet), so a recast after a crash still carries the alternates.
   */
  readonly buildHostList: readonly Selection[];
}

/** What a (possibly redelivered) server action finds in the instance's cell. */
export interface ActionState {
  /** Undefined: no such live instance (deleted, or never in this cell). */
  readonly instance: ActionInstance | undefined;
  /** The instance action of this request: undefined before the first delivery recorded it; `failed` once an event of it ended in Error. */
  readonly action: { readonly failed: boolean } | undefined;
  /** A move's migration record (the request's deterministic uuid), if it exists. */
  readonly migration: { readonly status: string; readonly destCompute: string | null; readonly destNode: string | null } | undefined;
}

/** The guarded start of a server action, applied in one cell transaction. */
export interface ActionBegin {
  readonly instanceUuid: string;
  readonly requestId: string;
  /** Nova's instance action name. */
  readonly action: string;
  readonly userId: string;
  readonly projectId: string;
  /** The guard: the instance's vm_state is one of these and its task_state one of `fromTaskStates`. */
  readonly vmStates: readonly string[];
  readonly fromTaskStates: readonly (string | null)[];
  /** The task_state the action sets (null: none, e.g. confirmResize). */
  readonly taskState: string | null;
  /** Nova's conductor events started with the action (host: the conductor). */
  readonly events: readonly string[];
  readonly conductorHost: string;
  /** A move: the migration record created with it. */
  readonly migration?:
    | {
        readonly uuid: string;
        readonly type: 'migration' | 'resize' | 'live-migration' | 'evacuation';
        readonly status: string;
        /** Nova's old/new_instance_type_id of the record, from the flavor the instance has when the guard holds. */
        readonly instanceTypeIds: (current: Flavor) => { readonly old: number | null; readonly new: number | null };
      }
    | undefined;
  /** Unshelve and moves: forget a host list left by an earlier action (the row's buildHostList is this request's from now on). */
  readonly clearHostList: boolean;
  /** A refused guard marks this event Error (host `refusedEventHost`), so the action shows why it did nothing. */
  readonly refusedEvent: string;
  readonly refusedEventHost: string | null;
  /** The refused event's details, from the instance as the guard found it (Nova's InstanceInvalidState message). */
  readonly refusedDetails: (instance: ActionInstance) => string;
}

/** Why a server action ended without reaching the cell conductor (NoValidHost, a refused cast). */
export interface ActionFailure {
  readonly instanceUuid: string;
  readonly requestId: string;
  /** The task_state the action set: only an instance still in it is put back (task_state null, vm_state unchanged unless `vmState`). */
  readonly taskState: string | null;
  /** The vm_state to set with it (an evacuate that found no host: Nova's ERROR); undefined leaves it. */
  readonly vmState?: 'error' | undefined;
  /** A move's migration: set to `error` if it is still in `fromStatus`. */
  readonly migration?: { readonly uuid: string; readonly fromStatus: string } | undefined;
  readonly fault: { readonly message: string; readonly details: string };
  /** The events ended in Error, each on its host (the conductor's, or the instance's for a compute event). */
  readonly events: readonly { readonly event: string; readonly host: string | null }[];
}

/** An action given up unapplied (its api intent expired), recorded so the user sees why nothing happened. */
export interface ActionGiveUp {
  readonly instanceUuid: string;
  readonly requestId: string;
  readonly action: string;
  readonly userId: string;
  readonly projectId: string;
  /** The event that ends in Error (the one a refusal is recorded on), and its host. */
  readonly event: string;
  readonly host: string | null;
  readonly fault: { readonly message: string; readonly details: string };
}

/** A compute service's liveness as Nova's servicegroup reads it. */
export interface ComputeServiceState {
  readonly forcedDown: boolean;
  /** The last heartbeat; null: never reported. */
  readonly lastSeenUp: Date | null;
}

/**
 * A cell's database as the server actions write it. Every method is one transaction, idempotent
 * and safe to retry (guards make a repeat change nothing); each throws only when the database is
 * unavailable (the cast is then retried).
 */
export interface ServerActionRecords {
  /** Read-only: the instance, this request's action and its migration (see {@link ActionState}). */
  read(instanceUuid: string, requestId: string, migrationUuid: string | undefined): Promise<ActionState>;
  /**
   * Records the instance action (user, project); then, if the guard holds, applies the action's
   * task_state, starts its conductor events and creates its migration (source host and node from
   * the instance). A refused guard records the action with `refusedEvent` in Error and changes
   * nothing else. `duplicate`: another delivery of the request recorded the action first (nothing
   * written: resume from what it did); `not_found`: no live instance, nothing written.
   */
  begin(
    b: ActionBegin,
  ): Promise<
    | { readonly kind: 'applied'; readonly instance: ActionInstance }
    | { readonly kind: 'refused'; readonly instance: ActionInstance }
    | { readonly kind: 'duplicate' }
    | { readonly kind: 'not_found' }
  >;
  /**
   * Records where a scheduled action goes before it is cast, in one transaction: a move's migration
   * gets the chosen host and node (only while still in `fromStatus` with no destination, or with
   * this one) and the instance the whole host list; an unshelve's host list goes on the instance
   * (only while it is still `unshelving`). `gone`: the instance was deleted meanwhile; `stale`: the
   * migration or instance moved on (nothing written).
   */
  recordDestination(d: {
    readonly instanceUuid: string;
    readonly hostList: readonly Selection[];
    readonly migration?: { readonly uuid: string; readonly fromStatus: string } | undefined;
  }): Promise<'recorded' | 'gone' | 'stale'>;
  /** The failure of an action (see {@link ActionFailure}): the fault only with the state change, so a repeat adds none. `gone`: no live instance. */
  fail(f: ActionFailure): Promise<'failed' | 'gone'>;
  /**
   * Records an action the api gave up on before any delivery took it up (see {@link ActionGiveUp}):
   * the instance action with its event in Error and a fault; the instance is not changed.
   * `duplicate`: the action is recorded already (a delivery took it up: nothing written);
   * `not_found`: no live instance. Idempotent.
   */
  giveUp(g: ActionGiveUp): Promise<'recorded' | 'duplicate' | 'not_found'>;
  /** The compute service of a host in this cell, as a forced destination's check reads it; undefined if none. Read-only. */
  computeService(host: string): Promise<ComputeServiceState | undefined>;
  /** Ends the conductor events in Success. */
  finishEvents(instanceUuid: string, requestId: string, events: readonly string[], conductorHost: string): Promise<void>;
  /**
   * Runs `work` with records bound to one transaction holding the instance's server-action lock
   * (the scheduling of a move or unshelve): a second delivery of the same cast waits, then reads
   * what the first recorded. Commits when `work` resolves, rolls back when it throws; `work`'s
   * result or error is passed through. `work` must not use the outer records (one connection).
   */
  exclusive<T>(instanceUuid: string, work: (records: Omit<ServerActionRecords, 'exclusive'>) => Promise<T>): Promise<T>;
}

/**
 * The cell conductor of one cell, on that cell's bus. `unroutable`: no conductor queue (nothing
 * queued). The cell conductor dedups per (instance, request id), so repeating a cast is safe.
 * Throws when the bus cannot take it now (retryable).
 */
export interface CellActionCaster {
  instanceAction(request: InstanceActionRequest): Promise<CastResult>;
}

/** Placement as a failed move gives it back. Both idempotent, safe to retry; throw on infrastructure failure. */
export interface MoveClaims {
  /** The migration's allocations become the instance's again (the source); a migration holding nothing changes nothing. */
  revertMove(instanceUuid: string, migrationUuid: string): Promise<void>;
  /** Deletes these consumers' allocations (an unshelve's claim, a deleted instance's leftovers). */
  release(consumerUuids: readonly string[]): Promise<void>;
}

/** The API DB as server actions read and write it. Each method idempotent, safe to retry. */
export interface ServerActionApi {
  /** The instance's RequestSpec (Nova's request_specs), or undefined. Read-only. */
  requestSpec(instanceUuid: string): Promise<RequestSpec | undefined>;
  /** Saves the RequestSpec (replacing it): a resize's new flavor. */
  saveRequestSpec(spec: RequestSpec): Promise<void>;
  /** Whether the server's pending intent is this request's. Read-only. */
  intentPending(instanceUuid: string, requestId: string): Promise<boolean>;
  /** Deletes this request's intent (another request's is kept). */
  clearIntent(instanceUuid: string, requestId: string): Promise<void>;
}

/** Everything a server action on an instance of one cell needs. */
export interface ServerActionPorts {
  readonly records: ServerActionRecords;
  readonly cell: CellActionCaster;
  readonly cellName: string;
  readonly api: ServerActionApi;
  readonly selector: DestinationSelector;
  readonly claims: MoveClaims;
}
