import { VmState } from '@cellsched/wire';

/** Nova's vm_state strings, as stored in `instances.vm_state`. */
export type VmStateName =
  | 'active'
  | 'building'
  | 'paused'
  | 'suspended'
  | 'stopped'
  | 'rescued'
  | 'resized'
  | 'soft-delete'
  | 'deleted'
  | 'error'
  | 'shelved'
  | 'shelved_offloaded';

const TO_WIRE: Partial<Record<VmStateName, VmState>> = {
  active: VmState.VM_STATE_ACTIVE,
  building: VmState.VM_STATE_BUILDING,
  error: VmState.VM_STATE_ERROR,
  deleted: VmState.VM_STATE_DELETED,
  stopped: VmState.VM_STATE_STOPPED,
  resized: VmState.VM_STATE_RESIZED,
  shelved_offloaded: VmState.VM_STATE_SHELVED_OFFLOADED,
};

/** The wire enum for a stored vm_state; states the wire lacks map to UNSPECIFIED. Pure. */
export function vmStateToWire(state: VmStateName): VmState {
  return TO_WIRE[state] ?? VmState.VM_STATE_UNSPECIFIED;
}

/** The stored vm_state for a wire enum value; throws `TypeError` for UNSPECIFIED or unknown values. Pure. */
export function vmStateFromWire(state: VmState): VmStateName {
  const found = (Object.entries(TO_WIRE) as [VmStateName, VmState][]).find(([, v]) => v === state);
  if (found === undefined) throw new TypeError(`no vm_state for wire value ${String(state)}`);
  return found[0];
}

/** Nova's task_state strings used by the boot flow (instances.task_state; NULL means none). */
export const TaskState = {
  SCHEDULING: 'scheduling',
  BLOCK_DEVICE_MAPPING: 'block_device_mapping',
  NETWORKING: 'networking',
  SPAWNING: 'spawning',
  DELETING: 'deleting',
} as const;
