/**
 * The vocabulary of the action state machines: Nova's action names, the compute steps
 * (InstanceStepRequest.step: Nova's compute manager methods), the instance action events they
 * are recorded as, Nova's task states and power states, and which vm_states each action starts from.
 */
import type { VmStateName } from './types';

/** Nova's instance action names (nova/compute/instance_actions.py) the cell conductor carries out. */
export const ACTION = {
  stop: 'stop',
  start: 'start',
  reboot: 'reboot',
  rebuild: 'rebuild',
  shelve: 'shelve',
  shelveOffload: 'shelveOffload',
  unshelve: 'unshelve',
  migrate: 'migrate',
  resize: 'resize',
  confirmResize: 'confirmResize',
  revertResize: 'revertResize',
  liveMigration: 'live-migration',
  evacuate: 'evacuate',
} as const;
export type ActionName = (typeof ACTION)[keyof typeof ACTION];

/** The compute steps (the proto's list). */
export const STEP = {
  powerOff: 'power_off',
  powerOn: 'power_on',
  rebootSoft: 'reboot_soft',
  rebootHard: 'reboot_hard',
  rebuild: 'rebuild',
  shelveOffload: 'shelve_offload',
  unshelve: 'unshelve',
  prepResize: 'prep_resize',
  resizeInstance: 'resize_instance',
  finishResize: 'finish_resize',
  confirmResize: 'confirm_resize',
  revertResize: 'revert_resize',
  finishRevertResize: 'finish_revert_resize',
  preLiveMigration: 'pre_live_migration',
  liveMigration: 'live_migration',
  postLiveMigration: 'post_live_migration',
  rollbackLiveMigration: 'rollback_live_migration',
  rebuildEvacuated: 'rebuild_evacuated',
  destroyEvacuated: 'destroy_evacuated',
} as const;
export type StepName = (typeof STEP)[keyof typeof STEP];

/** Every step name, for validation. */
export const ALL_STEPS: readonly string[] = Object.freeze(Object.values(STEP));

/** Nova's task_state strings of the actions (nova/compute/task_states.py). */
export const TASK = {
  poweringOff: 'powering-off',
  poweringOn: 'powering-on',
  rebooting: 'rebooting',
  rebootingHard: 'rebooting_hard',
  rebuilding: 'rebuilding',
  shelving: 'shelving',
  shelvingOffloading: 'shelving_offloading',
  unshelving: 'unshelving',
  spawning: 'spawning',
  resizePrep: 'resize_prep',
  resizeMigrating: 'resize_migrating',
  resizeMigrated: 'resize_migrated',
  resizeFinish: 'resize_finish',
  resizeReverting: 'resize_reverting',
  migrating: 'migrating',
} as const;

/** Nova's power_state values. */
export const POWER = { running: 1, shutdown: 4 } as const;

/**
 * The instance action event each step is recorded as, with Nova's names (what os-instance-actions
 * shows on Nova for the same step). `post_live_migration` runs on the source here (it drops the old
 * guest) where Nova's event is the destination's `post_live_migration_at_destination`: it is
 * recorded with that name on the destination host (see {@link eventHostOf}).
 */
export const STEP_EVENT: Readonly<Record<StepName, string>> = {
  power_off: 'compute_stop_instance',
  power_on: 'compute_start_instance',
  reboot_soft: 'compute_reboot_instance',
  reboot_hard: 'compute_reboot_instance',
  rebuild: 'compute_rebuild_instance',
  shelve_offload: 'compute_shelve_offload_instance',
  unshelve: 'compute_unshelve_instance',
  prep_resize: 'compute_prep_resize',
  resize_instance: 'compute_resize_instance',
  finish_resize: 'compute_finish_resize',
  confirm_resize: 'compute_confirm_resize',
  revert_resize: 'compute_revert_resize',
  finish_revert_resize: 'compute_finish_revert_resize',
  pre_live_migration: 'compute_pre_live_migration',
  live_migration: 'compute_live_migration',
  post_live_migration: 'compute_post_live_migration_at_destination',
  rollback_live_migration: 'compute_rollback_live_migration_at_destination',
  rebuild_evacuated: 'compute_rebuild_instance',
  destroy_evacuated: 'compute_destroy_evacuated_instance',
};

/** The event a step is recorded as in this action (shelve offloads at once: Nova records `compute_shelve_instance`). Pure. */
export function eventOf(action: string, step: string): string {
  if (action === ACTION.shelve && step === STEP.shelveOffload) return 'compute_shelve_instance';
  return STEP_EVENT[step as StepName] ?? `compute_${step}`;
}

/** Steps that leave a guest of the instance on the host they ran on (a stale success there must be terminated). */
export const GUEST_CREATING_STEPS: ReadonlySet<string> = new Set([
  STEP.unshelve,
  STEP.finishResize,
  STEP.preLiveMigration,
  STEP.rebuildEvacuated,
]);

/**
 * Identifies one report of one step of one attempt (a task's `entered_by`): a redelivery of the same
 * report has the same key, the other outcome of the same step (a compute's late success after the
 * watchdog failed it) does not. Pure.
 */
export function stepKey(step: string, host: string, attempt: number, failed = false): string {
  return `${step}@${host}#${attempt}${failed ? ':failed' : ''}`;
}

/** What each action needs before it starts: the vm_states it starts from (Nova's check_instance_state), its task_state, whether it is a move. */
export interface ActionPlan {
  readonly vmStates: readonly VmStateName[];
  /** The task_state the super-conductor applied for it (null: none, confirmResize). */
  readonly taskState: string | null;
  /** A move: a migration record (created by the super-conductor) and a destination in host_list. */
  readonly migration: boolean;
  /** Needs host_list (the scheduler's destinations, the first claimed). */
  readonly destinations: boolean;
}

export const ACTION_PLANS: Readonly<Record<ActionName, ActionPlan>> = {
  stop: { vmStates: ['active', 'error'], taskState: TASK.poweringOff, migration: false, destinations: false },
  start: { vmStates: ['stopped'], taskState: TASK.poweringOn, migration: false, destinations: false },
  reboot: {
    vmStates: ['active', 'stopped', 'paused', 'suspended', 'error'],
    taskState: TASK.rebooting,
    migration: false,
    destinations: false,
  },
  rebuild: { vmStates: ['active', 'stopped', 'error'], taskState: TASK.rebuilding, migration: false, destinations: false },
  shelve: { vmStates: ['active', 'stopped', 'paused', 'suspended'], taskState: TASK.shelving, migration: false, destinations: false },
  shelveOffload: { vmStates: ['shelved'], taskState: TASK.shelvingOffloading, migration: false, destinations: false },
  unshelve: { vmStates: ['shelved', 'shelved_offloaded'], taskState: TASK.unshelving, migration: false, destinations: true },
  migrate: { vmStates: ['active', 'stopped'], taskState: TASK.resizePrep, migration: true, destinations: true },
  resize: { vmStates: ['active', 'stopped'], taskState: TASK.resizePrep, migration: true, destinations: true },
  confirmResize: { vmStates: ['resized'], taskState: null, migration: true, destinations: false },
  revertResize: { vmStates: ['resized'], taskState: TASK.resizeReverting, migration: true, destinations: false },
  'live-migration': { vmStates: ['active', 'paused'], taskState: TASK.migrating, migration: true, destinations: true },
  evacuate: { vmStates: ['active', 'stopped', 'error'], taskState: TASK.rebuilding, migration: true, destinations: true },
};

/** The plan of an action name, or undefined for one the cell conductor does not carry out. Pure. */
export function planOf(action: string): ActionPlan | undefined {
  return Object.hasOwn(ACTION_PLANS, action) ? ACTION_PLANS[action as ActionName] : undefined;
}

/** The task_state of a reboot (Nova: rebooting / rebooting_hard). Pure. */
export function rebootTaskState(rebootType: string): string {
  return rebootType === 'HARD' ? TASK.rebootingHard : TASK.rebooting;
}

/** Migration statuses a move ends in (see cell-db's MIGRATION_FINAL_STATUSES; `done` is not one). */
export const MIGRATION_FINAL: ReadonlySet<string> = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled']);
