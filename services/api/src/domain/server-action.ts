import type { VmStateName } from '@cellsched/cell-db';
import { conflict } from './errors';
import type { ServerRecord } from './server-record';

/** Nova's instance action names (nova/compute/instance_actions.py) of the actions served. */
export type ServerActionName =
  | 'stop'
  | 'start'
  | 'reboot'
  | 'rebuild'
  | 'migrate'
  | 'resize'
  | 'confirmResize'
  | 'revertResize'
  | 'live-migration'
  | 'evacuate'
  | 'shelve'
  | 'shelveOffload'
  | 'unshelve';

/**
 * A validated `POST /servers/{id}/action` body: what the action asks for, before any database
 * look-up. `verb` is the name Nova's 409 messages use (the body key, `os-migrateLive` for a live
 * migration; `stop`/`start` for `os-stop`/`os-start`).
 */
export interface ParsedServerAction {
  readonly action: ServerActionName;
  readonly verb: string;
  /** reboot. */
  readonly rebootType?: 'SOFT' | 'HARD';
  /** resize: the flavor id asked for. */
  readonly flavorRef?: string;
  /** migrate (2.56+), os-migrateLive, evacuate, unshelve (2.91+): the requested destination host. */
  readonly host?: string;
  /**
   * evacuate (2.29-2.67) and os-migrateLive (2.30-2.67): `force` true with a host. Nova's conductor
   * then bypasses the scheduler and claims that host directly (placement still checks capacity).
   */
  readonly force?: boolean;
  /** os-migrateLive: `auto` (2.25+ or absent), `true`, `false`. */
  readonly blockMigration?: 'auto' | 'true' | 'false';
  /** unshelve (2.77+): the availability zone asked for. */
  readonly availabilityZone?: string;
  /** rebuild: the image (an id), the new name if given. */
  readonly imageRef?: string;
  readonly name?: string;
  /** rebuild, evacuate: the admin password given (Nova generates one when absent). */
  readonly adminPass?: string;
  /** evacuate below 2.14: `onSharedStorage`. */
  readonly onSharedStorage?: boolean;
  /** rebuild (2.57+): `user_data` when the body gave the key (null resets it). */
  readonly userData?: string | null;
}

/** The task_state an accepted action sets at once (Nova's compute API saves it before it casts); null: none. Pure. */
export function taskStateOf(p: ParsedServerAction): string | null {
  switch (p.action) {
    case 'stop':
      return 'powering-off';
    case 'start':
      return 'powering-on';
    case 'reboot':
      return p.rebootType === 'HARD' ? 'rebooting_hard' : 'rebooting';
    case 'rebuild':
    case 'evacuate':
      return 'rebuilding';
    case 'migrate':
    case 'resize':
      return 'resize_prep';
    case 'confirmResize':
      return null;
    case 'revertResize':
      return 'resize_reverting';
    case 'live-migration':
      return 'migrating';
    case 'shelve':
      return 'shelving';
    case 'shelveOffload':
      return 'shelving_offloading';
    case 'unshelve':
      return 'unshelving';
  }
}

/** Nova's `task_states.ALLOW_REBOOT`: a hard reboot may interrupt these. */
const ALLOW_REBOOT: readonly (string | null)[] = [
  null,
  'rebooting',
  'reboot_pending',
  'reboot_started',
  'resuming',
  'rebooting_hard',
  'unpausing',
  'pausing',
  'suspending',
];

/** Nova's `check_instance_state` of one action: allowed vm_states and task_states (undefined = any). */
interface StateRule {
  readonly vmStates: readonly VmStateName[];
  readonly taskStates?: readonly (string | null)[];
}

const NONE: readonly (string | null)[] = [null];

/** The `check_instance_state` decorators of nova/compute/api.py (26.2), by action. */
function ruleOf(p: ParsedServerAction): StateRule {
  switch (p.action) {
    case 'stop':
      return { vmStates: ['active', 'error'], taskStates: NONE };
    case 'start':
      return { vmStates: ['stopped'], taskStates: NONE };
    case 'reboot':
      return p.rebootType === 'HARD'
        ? { vmStates: ['active', 'stopped', 'paused', 'suspended', 'error'], taskStates: ALLOW_REBOOT }
        : { vmStates: ['active'], taskStates: NONE };
    case 'rebuild':
      return { vmStates: ['active', 'stopped', 'error'], taskStates: NONE };
    case 'migrate':
    case 'resize':
      return { vmStates: ['active', 'stopped'], taskStates: NONE };
    case 'confirmResize':
    case 'revertResize':
      return { vmStates: ['resized'], taskStates: NONE };
    case 'live-migration':
      return { vmStates: ['active', 'paused'], taskStates: NONE };
    // NOTE: evacuate allows any task_state: a server stuck in a task on a dead host must be recoverable.
    case 'evacuate':
      return { vmStates: ['active', 'stopped', 'error'] };
    case 'shelve':
      return { vmStates: ['active', 'stopped', 'paused', 'suspended'], taskStates: NONE };
    case 'shelveOffload':
      return { vmStates: ['shelved'], taskStates: NONE };
    case 'unshelve':
      return { vmStates: ['shelved', 'shelved_offloaded'], taskStates: NONE };
  }
}

/** Nova's 409 for an instance in the wrong state (`raise_http_conflict_for_instance_invalid_state`). Pure. */
export function invalidState(verb: string, uuid: string, attr: 'vm_state' | 'task_state', state: string | null): Error {
  if (state === null) return conflict(`Instance ${uuid} is in an invalid state for '${verb}'`);
  return conflict(`Cannot '${verb}' instance ${uuid} while it is in ${attr} ${state}`);
}

/**
 * Nova's `check_instance_state` for the action: vm_state, then task_state, then "has been
 * launched" — 409 with Nova's message at the first that fails. A server whose cell did not
 * answer cannot be judged (the caller answers 503 before this). Pure.
 */
export function checkActionState(p: ParsedServerAction, r: ServerRecord): void {
  if (r.vmState === 'unknown') throw conflict(`Instance ${r.uuid} is in an invalid state for '${p.verb}'`);
  const rule = ruleOf(p);
  if (!rule.vmStates.includes(r.vmState)) throw invalidState(p.verb, r.uuid, 'vm_state', r.vmState);
  if (rule.taskStates !== undefined && !rule.taskStates.includes(r.taskState))
    throw invalidState(p.verb, r.uuid, 'task_state', r.taskState);
  if (r.launchedAt === null) throw invalidState(p.verb, r.uuid, 'task_state', null);
}

/**
 * Nova's `check_instance_host`: stop and start need a host, checked before the state ("Instance
 * <uuid> is not ready", 409). Pure.
 */
export function checkHostBeforeState(p: ParsedServerAction, r: ServerRecord): void {
  if ((p.action === 'stop' || p.action === 'start') && (r.host === null || r.host === ''))
    throw conflict(`Instance ${r.uuid} is not ready`);
}
