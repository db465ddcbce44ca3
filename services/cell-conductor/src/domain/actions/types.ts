/**
 * What the action state machines read and decide (issue 13): the instance under its row lock with
 * its action in progress and its migration (a snapshot), a compute's step result (a report), and
 * the transition to carry out. Every decision is a pure function of these; `action-flow.ts` has the
 * ports do it.
 */
import type { InstanceTaskRecord, VmStateName } from '@cellsched/cell-db';
import type { Failure, Flavor, Instance, RequestSpec, Selection } from '@cellsched/wire';
import type { Fault } from '../build-attempt';

export type { Fault } from '../build-attempt';
/** Nova's vm_state strings the actions move between (the cell database's). */
export type { VmStateName } from '@cellsched/cell-db';

/** The instance row as the action decisions see it (read under its lock). */
export interface ActionInstance {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  readonly vmState: VmStateName;
  readonly taskState: string | null;
  /** Nova's power_state (1 running, 4 shutdown). */
  readonly powerState: number;
  readonly host: string | null;
  readonly node: string | null;
  readonly flavor: Flavor;
  readonly oldFlavor: Flavor | undefined;
  readonly newFlavor: Flavor | undefined;
  readonly imageRef: string | null;
  /** The instance as casts carry it (tagged with its cell). */
  readonly wire: Instance;
}

/**
 * The action in progress: what the decisions read of its `instance_tasks` row (`enteredBy` is
 * 'action' or the {@link stepKey} of the result that advanced to this step; `failure` is set
 * while a failed move rolls back).
 */
export type ActionTask = Pick<
  InstanceTaskRecord,
  | 'requestId'
  | 'action'
  | 'step'
  | 'stepHost'
  | 'attempt'
  | 'enteredBy'
  | 'migrationUuid'
  | 'hostList'
  | 'requestSpec'
  | 'params'
  | 'priorVmState'
  | 'failure'
>;

/** Nova's Migration as the decisions see it. */
export interface MigrationView {
  readonly uuid: string;
  readonly instanceUuid: string;
  readonly migrationType: string;
  readonly status: string;
  readonly sourceCompute: string | null;
  readonly sourceNode: string | null;
  readonly destCompute: string | null;
  readonly destNode: string | null;
}

/** Everything one decision reads, under the instance's row lock. */
export interface ActionSnapshot {
  readonly instance: ActionInstance;
  readonly task: ActionTask | undefined;
  /** The task's migration, else the one the message names (undefined: none, or not found). */
  readonly migration: MigrationView | undefined;
  /** Whether the instance action of the message's request id is finished already (a redelivery after the end). */
  readonly actionFinished: boolean;
}

/** The action a super-conductor cast asks for (InstanceActionRequest, or the auto-confirm's own). */
export interface ActionRequest {
  readonly instanceUuid: string;
  readonly action: string;
  readonly requestId: string;
  readonly rebootType: string;
  readonly imageRef: string;
  readonly displayName: string;
  readonly migrationUuid: string;
  readonly hostList: readonly Selection[];
  readonly newFlavor: Flavor | undefined;
  readonly requestSpec: RequestSpec | undefined;
  readonly userId: string;
  readonly projectId: string;
  /** live-migration: "auto", "true", "false" ("" from an older sender); '' otherwise. */
  readonly blockMigration: string;
}

/** Where a step report comes from: the compute's result, the broker refusing the cast, or the step watchdog. */
export type ReportOrigin = 'compute' | 'unroutable' | 'watchdog';

/** One step's outcome (InstanceStepResult, a refused cast, or the watchdog's verdict). */
export interface StepReport {
  readonly instanceUuid: string;
  readonly host: string;
  readonly step: string;
  readonly migrationUuid: string;
  readonly attempt: number;
  readonly requestId: string;
  /** Absent on success. */
  readonly failure: Failure | undefined;
  readonly origin: ReportOrigin;
}

/** Placement operations of a transition, carried out in order while the row lock is held. */
export type PlacementOp =
  /** Deletes the instance consumer's allocations (shelve offload, a failed unshelve). */
  | { readonly op: 'release_instance' }
  /** Deletes the migration consumer's allocations (confirm, live migration done, evacuation cleanup). */
  | { readonly op: 'release_migration' }
  /** The migration's allocations become the instance's again (revert, a failed move). */
  | { readonly op: 'revert_move' };

/** Instance fields a transition writes (`undefined` leaves a field, `null` clears). */
export interface InstanceChange {
  readonly vmState?: VmStateName;
  readonly taskState?: string | null;
  readonly powerState?: number;
  readonly host?: string | null;
  readonly node?: string | null;
  readonly flavor?: Flavor;
  readonly oldFlavor?: Flavor | null;
  readonly newFlavor?: Flavor | null;
  readonly imageRef?: string | null;
  readonly displayName?: string | null;
}

export interface MigrationChange {
  readonly status?: string;
  readonly destCompute?: string | null;
  readonly destNode?: string | null;
}

/** An instance action event (Nova's names), finished now. */
export interface StepEvent {
  readonly event: string;
  readonly host: string | null;
  readonly ok: boolean;
  readonly details?: string;
}

/** The next step of the action: cast after the commit. */
export interface NextStep {
  readonly step: string;
  readonly host: string;
  readonly attempt: number;
  /** The alternates left; undefined keeps the task's. */
  readonly hostList?: readonly Selection[];
  /** Set when a move starts rolling back. */
  readonly failure?: string;
}

/** What becomes of the task row. */
export type TaskChange =
  /** The action's first step (a new task row). */
  | {
      readonly kind: 'start';
      readonly next: NextStep;
      readonly migrationUuid: string | null;
      readonly requestSpec: RequestSpec | undefined;
      readonly params: Readonly<Record<string, string>>;
      readonly priorVmState: VmStateName;
    }
  /** The next step (the task guarded on the reported step). */
  | { readonly kind: 'advance'; readonly next: NextStep }
  /** The action is over: the task row goes, the instance action is finished. */
  | { readonly kind: 'end' }
  /** The action never became this instance's (refused): only its instance action is finished. */
  | { readonly kind: 'refused' };

/** One decision's effects, in the order the flow carries them out. */
export interface Transition {
  readonly placement?: readonly PlacementOp[];
  readonly instance?: InstanceChange;
  readonly migration?: MigrationChange;
  readonly fault?: Fault;
  readonly events?: readonly StepEvent[];
  readonly task: TaskChange;
  /** Hosts where a guest of this instance must go (terminate_instance after the commit). */
  readonly terminate?: readonly string[];
}
