import type { VmStateName } from '@cellsched/cell-db';
import { badRequest } from './errors';

const REBOOT = { rebooting: 'REBOOT', reboot_pending: 'REBOOT', reboot_started: 'REBOOT' };
const HARD_REBOOT = { rebooting_hard: 'HARD_REBOOT', reboot_pending_hard: 'HARD_REBOOT', reboot_started_hard: 'HARD_REBOOT' };
const REBUILD = { rebuilding: 'REBUILD', rebuild_block_device_mapping: 'REBUILD', rebuild_spawning: 'REBUILD' };
const RESIZE = { resize_prep: 'RESIZE', resize_migrating: 'RESIZE', resize_migrated: 'RESIZE', resize_finish: 'RESIZE' };

/**
 * Nova's vm_state → task_state → API status (nova/api/openstack/common.py `_STATE_MAP`):
 * `default` is the status of the vm_state whatever its task_state, unless that task_state has
 * its own entry.
 */
const STATE_MAP: Readonly<Record<VmStateName, Readonly<Record<string, string>>>> = {
  active: { default: 'ACTIVE', ...REBOOT, ...HARD_REBOOT, updating_password: 'PASSWORD', ...REBUILD, migrating: 'MIGRATING', ...RESIZE },
  building: { default: 'BUILD' },
  stopped: { default: 'SHUTOFF', ...RESIZE, ...REBUILD },
  resized: { default: 'VERIFY_RESIZE', resize_reverting: 'REVERT_RESIZE' },
  paused: { default: 'PAUSED', migrating: 'MIGRATING' },
  suspended: { default: 'SUSPENDED' },
  rescued: { default: 'RESCUE' },
  error: { default: 'ERROR', ...REBUILD },
  deleted: { default: 'DELETED' },
  'soft-delete': { default: 'SOFT_DELETED' },
  shelved: { default: 'SHELVED' },
  shelved_offloaded: { default: 'SHELVED_OFFLOADED' },
};

/** The status a user sees for an instance (Nova's `status_from_state`). Pure. */
export function statusOf(vmState: VmStateName, taskState: string | null): string {
  const map = STATE_MAP[vmState];
  return (taskState === null ? undefined : map[taskState]) ?? map.default ?? 'UNKNOWN';
}

/** What a `status` filter selects: vm_states, and task_states unless any task_state will do. */
export interface StatusFilter {
  readonly vmStates: readonly VmStateName[];
  /** undefined: any task_state (the status is some vm_state's default); null in the list means none. */
  readonly taskStates: readonly (string | null)[] | undefined;
}

/**
 * The vm_states and task_states a `status` filter selects (Nova's `task_and_vm_state_from_status`
 * and the servers index: a status that is some vm_state's default puts no bound on the task_state,
 * so `ACTIVE` also lists a rebooting server, as Nova does). An unknown status is Nova's 400
 * "Invalid status value". Pure.
 */
export function statusFilter(status: string): StatusFilter {
  const wanted = status.toUpperCase();
  const vmStates = new Set<VmStateName>();
  const taskStates = new Set<string | null>();
  let anyTask = false;
  for (const [vm, map] of Object.entries(STATE_MAP) as [VmStateName, Record<string, string>][]) {
    for (const [task, s] of Object.entries(map)) {
      if (s !== wanted) continue;
      vmStates.add(vm);
      if (task === 'default') anyTask = true;
      else taskStates.add(task);
    }
  }
  if (vmStates.size === 0) throw badRequest('Invalid status value');
  return { vmStates: [...vmStates].sort(), taskStates: anyTask ? undefined : [...taskStates].sort() };
}

/** Whether a server in these states passes the filter. Pure. */
export function matchesStatus(f: StatusFilter, vmState: VmStateName, taskState: string | null): boolean {
  return f.vmStates.includes(vmState) && (f.taskStates === undefined || f.taskStates.includes(taskState));
}
