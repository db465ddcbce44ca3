import { ApiError } from './errors';
import { matchesStatus, statusFilter, statusOf } from './server-status';

describe('statusOf (Nova _STATE_MAP)', () => {
  it.each([
    ['active', null, 'ACTIVE'],
    ['active', 'deleting', 'ACTIVE'],
    ['active', 'powering-off', 'ACTIVE'],
    ['active', 'rebooting', 'REBOOT'],
    ['active', 'reboot_started', 'REBOOT'],
    ['active', 'rebooting_hard', 'HARD_REBOOT'],
    ['active', 'rebuilding', 'REBUILD'],
    ['active', 'rebuild_spawning', 'REBUILD'],
    ['active', 'migrating', 'MIGRATING'],
    ['active', 'resize_prep', 'RESIZE'],
    ['active', 'resize_finish', 'RESIZE'],
    ['active', 'shelving', 'ACTIVE'],
    ['stopped', null, 'SHUTOFF'],
    ['stopped', 'powering-on', 'SHUTOFF'],
    ['stopped', 'rebooting_hard', 'SHUTOFF'],
    ['stopped', 'resize_migrating', 'RESIZE'],
    ['stopped', 'rebuilding', 'REBUILD'],
    ['resized', null, 'VERIFY_RESIZE'],
    ['resized', 'resize_reverting', 'REVERT_RESIZE'],
    ['paused', 'migrating', 'MIGRATING'],
    ['error', null, 'ERROR'],
    ['error', 'rebuilding', 'REBUILD'],
    ['building', 'scheduling', 'BUILD'],
    ['shelved', null, 'SHELVED'],
    ['shelved_offloaded', 'unshelving', 'SHELVED_OFFLOADED'],
    ['soft-delete', null, 'SOFT_DELETED'],
    ['deleted', null, 'DELETED'],
  ] as const)('%s / %s → %s', (vm, task, status) => {
    expect(statusOf(vm, task)).toBe(status);
  });
});

describe('statusFilter (Nova task_and_vm_state_from_status)', () => {
  it('a default status bounds only the vm_state, as Nova (ACTIVE lists a rebooting server)', () => {
    const f = statusFilter('active');
    expect(f).toEqual({ vmStates: ['active'], taskStates: undefined });
    expect(matchesStatus(f, 'active', 'rebooting')).toBe(true);
  });

  it('a task status bounds vm_states and task_states', () => {
    const f = statusFilter('RESIZE');
    expect(f.vmStates).toEqual(['active', 'stopped']);
    expect(matchesStatus(f, 'stopped', 'resize_prep')).toBe(true);
    expect(matchesStatus(f, 'active', null)).toBe(false);
    expect(statusFilter('MIGRATING').vmStates).toEqual(['active', 'paused']);
    expect(matchesStatus(statusFilter('HARD_REBOOT'), 'active', 'rebooting')).toBe(false);
  });

  it('an unknown status is a 400', () => {
    expect(() => statusFilter('BOGUS')).toThrow(new ApiError(400, 'Invalid status value'));
  });
});
