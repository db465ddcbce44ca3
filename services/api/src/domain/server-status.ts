import type { VmStateName } from '@cellsched/cell-db';
import { badRequest } from './errors';

/** Nova's vm_state → API status (nova/api/openstack/common.py `_STATE_MAP`, default tasks only). */
const STATUS_BY_VM_STATE: Readonly<Record<VmStateName, string>> = {
  active: 'ACTIVE', building: 'BUILD', paused: 'PAUSED', suspended: 'SUSPENDED', stopped: 'SHUTOFF', rescued: 'RESCUE',
  resized: 'VERIFY_RESIZE', 'soft-delete': 'SOFT_DELETED', deleted: 'DELETED', error: 'ERROR', shelved: 'SHELVED',
  shelved_offloaded: 'SHELVED_OFFLOADED',
};

/** The status a user sees for an instance. Pure. */
export function statusOf(vmState: VmStateName, taskState: string | null): string {
  if (vmState === 'active' && taskState === 'deleting') return 'ACTIVE';
  return STATUS_BY_VM_STATE[vmState];
}

/**
 * The vm_states a `status` filter selects (Nova's `task_and_vm_state_from_status`).
 * An unknown status is Nova's 400 "Invalid status value". Pure.
 */
export function vmStatesForStatus(status: string): VmStateName[] {
  const wanted = status.toUpperCase();
  const states = (Object.entries(STATUS_BY_VM_STATE) as [VmStateName, string][]).filter(([, s]) => s === wanted).map(([v]) => v);
  if (states.length === 0) throw badRequest('Invalid status value');
  return states;
}
