import type { ServerRecord } from './server-record';
import { withPendingAction } from './server-record';
import { checkActionState, checkHostBeforeState, taskStateOf, type ParsedServerAction } from './server-action';

const UUID = '11111111-2222-3333-4444-555555555555';
const server = (over: Partial<ServerRecord> = {}): ServerRecord => ({
  uuid: UUID,
  projectId: 'p',
  userId: 'u',
  name: 'vm',
  flavor: undefined,
  imageRef: 'img',
  vmState: 'active',
  taskState: null,
  powerState: 1,
  host: 'h1',
  node: 'h1',
  availabilityZone: 'nova',
  launchedAt: new Date(),
  terminatedAt: null,
  reservationId: 'r-1',
  launchIndex: 0,
  hostname: 'vm',
  createdAt: new Date(),
  updatedAt: new Date(),
  fault: undefined,
  hostStatus: 'UP',
  source: 'cell',
  ...over,
});
const act = (action: ParsedServerAction['action'], extra: Partial<ParsedServerAction> = {}): ParsedServerAction => ({
  action,
  verb: action,
  ...extra,
});
const message = (fn: () => void): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return `${(e as { status: number }).status} ${(e as Error).message}`;
  }
};

describe('checkActionState (Nova check_instance_state)', () => {
  it.each([
    ['stop', 'stopped', null, `409 Cannot 'stop' instance ${UUID} while it is in vm_state stopped`],
    ['stop', 'error', null, 'ok'],
    ['start', 'active', null, `409 Cannot 'start' instance ${UUID} while it is in vm_state active`],
    ['start', 'stopped', 'powering-on', `409 Cannot 'start' instance ${UUID} while it is in task_state powering-on`],
    ['resize', 'stopped', null, 'ok'],
    ['confirmResize', 'active', null, `409 Cannot 'confirmResize' instance ${UUID} while it is in vm_state active`],
    [
      'revertResize',
      'resized',
      'resize_reverting',
      `409 Cannot 'revertResize' instance ${UUID} while it is in task_state resize_reverting`,
    ],
    ['live-migration', 'paused', null, 'ok'],
    ['evacuate', 'active', 'migrating', 'ok'],
    ['evacuate', 'shelved_offloaded', null, `409 Cannot 'evacuate' instance ${UUID} while it is in vm_state shelved_offloaded`],
    ['shelve', 'suspended', null, 'ok'],
    ['shelveOffload', 'active', null, `409 Cannot 'shelveOffload' instance ${UUID} while it is in vm_state active`],
    ['unshelve', 'shelved_offloaded', null, 'ok'],
    ['rebuild', 'error', null, 'ok'],
    ['migrate', 'building', 'scheduling', `409 Cannot 'migrate' instance ${UUID} while it is in vm_state building`],
  ] as const)('%s on %s/%s → %s', (action, vmState, taskState, expected) => {
    expect(message(() => checkActionState(act(action), server({ vmState, taskState })))).toBe(expected);
  });

  it('reboot: soft only from ACTIVE with no task, hard also through a soft reboot and from SHUTOFF', () => {
    expect(message(() => checkActionState(act('reboot', { rebootType: 'SOFT' }), server({ taskState: 'rebooting' })))).toMatch(
      /task_state rebooting$/,
    );
    expect(message(() => checkActionState(act('reboot', { rebootType: 'HARD' }), server({ taskState: 'rebooting' })))).toBe('ok');
    expect(message(() => checkActionState(act('reboot', { rebootType: 'HARD' }), server({ vmState: 'stopped' })))).toBe('ok');
    expect(message(() => checkActionState(act('reboot', { rebootType: 'SOFT' }), server({ vmState: 'stopped' })))).toMatch(
      /vm_state stopped$/,
    );
  });

  it('a server never launched is in an invalid state (Nova must_have_launched)', () => {
    expect(message(() => checkActionState(act('stop'), server({ launchedAt: null })))).toBe(
      `409 Instance ${UUID} is in an invalid state for 'stop'`,
    );
  });

  it("the verb in the message is the request's (os-migrateLive for a live migration)", () => {
    expect(message(() => checkActionState({ action: 'live-migration', verb: 'os-migrateLive' }, server({ vmState: 'stopped' })))).toBe(
      `409 Cannot 'os-migrateLive' instance ${UUID} while it is in vm_state stopped`,
    );
  });

  it('stop and start need a host first (Nova check_instance_host)', () => {
    expect(message(() => checkHostBeforeState(act('stop'), server({ host: null, vmState: 'building' })))).toBe(
      `409 Instance ${UUID} is not ready`,
    );
    expect(message(() => checkHostBeforeState(act('reboot'), server({ host: null })))).toBe('ok');
  });
});

describe('taskStateOf', () => {
  it.each([
    [act('stop'), 'powering-off'],
    [act('start'), 'powering-on'],
    [act('reboot', { rebootType: 'SOFT' }), 'rebooting'],
    [act('reboot', { rebootType: 'HARD' }), 'rebooting_hard'],
    [act('rebuild'), 'rebuilding'],
    [act('evacuate'), 'rebuilding'],
    [act('migrate'), 'resize_prep'],
    [act('resize'), 'resize_prep'],
    [act('confirmResize'), null],
    [act('revertResize'), 'resize_reverting'],
    [act('live-migration'), 'migrating'],
    [act('shelve'), 'shelving'],
    [act('shelveOffload'), 'shelving_offloading'],
    [act('unshelve'), 'unshelving'],
  ])('%j → %s', (p, state) => {
    expect(taskStateOf(p)).toBe(state);
  });
});

describe('withPendingAction', () => {
  it('shows the pending task_state until the cell holds one of its own', () => {
    expect(withPendingAction(server(), { action: 'stop', taskState: 'powering-off' }).taskState).toBe('powering-off');
    expect(withPendingAction(server({ taskState: 'resize_migrating' }), { action: 'resize', taskState: 'resize_prep' }).taskState).toBe(
      'resize_migrating',
    );
    expect(withPendingAction(server({ source: 'build_request' }), { action: 'stop', taskState: 'powering-off' }).taskState).toBeNull();
  });

  it('a pending rebuild shows its image and name', () => {
    expect(withPendingAction(server(), { action: 'rebuild', taskState: 'rebuilding', imageRef: 'new', displayName: '' })).toMatchObject({
      imageRef: 'new',
      name: 'vm',
      taskState: 'rebuilding',
    });
  });
});
