import type { ServerActionRequest } from '@cellsched/wire';
import { FLAVOR } from '../../test/support/fake-action-cell';
import type { ActionInstance, ActionState } from '../ports';
import { actionDef, beginOf, migrationUuidFor, planServerAction, resumeStep, type ActionPlan } from './server-actions';

const UUID = '6f1e1a52-4c1b-4f43-9a53-0c2f3b9d2a10';
const req = (action: string, extra: Partial<ServerActionRequest> = {}): ServerActionRequest => ({
  instanceUuid: UUID,
  cellUuid: 'c1',
  action,
  requestId: 'req-1',
  userId: 'u',
  projectId: 'p',
  taskState: '',
  rebootType: '',
  flavor: FLAVOR,
  host: '',
  imageRef: '',
  blockMigration: '',
  availabilityZone: '',
  displayName: '',
  force: false,
  expiredAfterS: 0,
  ...extra,
});
const plan = (action: string, extra: Partial<ServerActionRequest> = {}): ActionPlan => planServerAction(req(action, extra)) as ActionPlan;
const inst = (o: Partial<ActionInstance> = {}): ActionInstance => ({
  uuid: UUID,
  projectId: 'p',
  userId: 'u',
  vmState: 'active',
  taskState: null,
  host: 'h1',
  node: 'n1',
  flavor: FLAVOR,
  oldFlavor: undefined,
  imageRef: null,
  availabilityZone: null,
  buildHostList: [],
  ...o,
});

test('migration uuids are derived from the instance and the request: stable across deliveries, new per request, RFC 4122 v5', () => {
  const a = migrationUuidFor(UUID, 'req-1');
  expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(migrationUuidFor(UUID.toUpperCase(), 'req-1')).toBe(a);
  expect(migrationUuidFor(UUID, 'req-2')).not.toBe(a);
  expect(plan('migrate').migrationUuid).toBe(a);
  expect(plan('stop').migrationUuid).toBeUndefined();
  expect(plan('unshelve').migrationUuid).toBeUndefined();
});

test.each([
  ['stop', '', ['active', 'rescued', 'error'], 'powering-off', 'lifecycle'],
  ['start', '', ['stopped'], 'powering-on', 'lifecycle'],
  ['reboot', 'SOFT', ['active'], 'rebooting', 'lifecycle'],
  ['reboot', 'HARD', ['active', 'stopped', 'paused', 'suspended', 'error'], 'rebooting_hard', 'lifecycle'],
  ['rebuild', '', ['active', 'stopped', 'error'], 'rebuilding', 'lifecycle'],
  ['confirmResize', '', ['resized'], null, 'lifecycle'],
  ['revertResize', '', ['resized'], 'resize_reverting', 'lifecycle'],
  ['shelve', '', ['active', 'stopped', 'paused', 'suspended'], 'shelving', 'lifecycle'],
  ['shelveOffload', '', ['shelved'], 'shelving_offloading', 'lifecycle'],
  ['migrate', '', ['active', 'stopped'], 'resize_prep', 'move'],
  ['resize', '', ['active', 'stopped'], 'resize_prep', 'move'],
  ['live-migration', '', ['active', 'paused'], 'migrating', 'move'],
  ['evacuate', '', ['active', 'stopped', 'error'], 'rebuilding', 'move'],
  ['unshelve', '', ['shelved', 'shelved_offloaded'], 'unshelving', 'unshelve'],
])("%s %s: Nova's vm_states %j, task_state %s, %s", (action, rebootType, vmStates, taskState, kind) => {
  expect(actionDef(action, rebootType)).toMatchObject({ vmStates, taskState, kind });
});

test("begin: the guard is Nova's (no task in progress; a hard reboot over a soft one), a move creates its migration, a refusal is recorded where the action runs", () => {
  const migrate = beginOf(plan('migrate'), 'sc-1', 'h1');
  expect(migrate).toMatchObject({
    fromTaskStates: [null],
    taskState: 'resize_prep',
    events: ['conductor_migrate_server', 'cold_migrate'],
    conductorHost: 'sc-1',
    migration: { uuid: migrationUuidFor(UUID, 'req-1'), type: 'migration', status: 'pre-migrating' },
    refusedEvent: 'conductor_migrate_server',
    refusedEventHost: 'sc-1',
  });
  expect(beginOf(plan('reboot', { rebootType: 'HARD' }), 'sc-1', 'h1').fromTaskStates).toEqual([
    null,
    'rebooting',
    'reboot_pending',
    'reboot_started',
  ]);
  const stop = beginOf(plan('stop'), 'sc-1', 'h1');
  expect(stop).toMatchObject({
    events: [],
    migration: undefined,
    refusedEvent: 'compute_stop_instance',
    refusedEventHost: 'h1',
    clearHostList: false,
  });
  expect(stop.refusedDetails(inst({ vmState: 'stopped' }))).toBe(`Cannot 'stop' instance ${UUID} while it is in vm_state stopped`);
  expect(stop.refusedDetails(inst({ taskState: 'deleting' }))).toBe(`Cannot 'stop' instance ${UUID} while it is in task_state deleting`);
  expect(beginOf(plan('unshelve'), 'sc-1', null)).toMatchObject({ events: ['schedule_instances'], clearHostList: true });
});

test("a move's migration records Nova's old/new_instance_type_id: a resize's two flavors, a migration's one twice, none for an evacuation", () => {
  const small = { ...FLAVOR, id: 3 };
  const big = { ...FLAVOR, id: 5, flavorid: 'big' };
  const ids = (action: string, current = small): unknown =>
    beginOf(plan(action, { flavor: big }), 'sc-1', 'h1').migration?.instanceTypeIds(current);
  expect(ids('resize')).toEqual({ old: 3, new: 5 });
  expect(ids('migrate')).toEqual({ old: 3, new: 3 });
  expect(ids('live-migration')).toEqual({ old: 3, new: 3 });
  expect(ids('evacuate')).toEqual({ old: null, new: null });
  // a flavor recorded before it carried its integer id (0): unknown, as null
  expect(ids('migrate', { ...FLAVOR, id: 0 })).toEqual({ old: null, new: null });
});

describe('resumeStep: where a (redelivered) cast picks up', () => {
  const state = (o: Partial<ActionState>): ActionState => ({ instance: inst(), action: { failed: false }, migration: undefined, ...o });
  const fresh: ActionState = { instance: inst(), action: undefined, migration: undefined };
  it.each([
    ['first delivery', 'stop', 'begin', fresh, true],
    ['first delivery of a deleted instance', 'stop', 'gone', { ...fresh, instance: undefined }, true],
    ['carried out before (intent cleared last)', 'stop', 'clear_intent', state({ instance: inst({ taskState: 'powering-off' }) }), false],
    ['refused before', 'stop', 'clear_intent', state({ action: { failed: true } }), true],
    ['applied, not cast yet', 'stop', 'cast', state({ instance: inst({ taskState: 'powering-off' }) }), true],
    ['applied, the cell already done', 'stop', 'clear_intent', state({}), true],
    ['confirmResize has no task_state: cast again', 'confirmResize', 'cast', state({ instance: inst({ vmState: 'resized' }) }), true],
    ['deleted after begin', 'stop', 'gone', state({ instance: undefined }), true],
    [
      'move not scheduled yet',
      'migrate',
      'schedule',
      state({ migration: { status: 'pre-migrating', destCompute: null, destNode: null } }),
      true,
    ],
    [
      'move destination recorded',
      'migrate',
      'cast',
      state({ migration: { status: 'pre-migrating', destCompute: 'h2', destNode: 'n2' } }),
      true,
    ],
    [
      'move the cell moved on',
      'migrate',
      'clear_intent',
      state({ migration: { status: 'migrating', destCompute: 'h2', destNode: 'n2' } }),
      true,
    ],
    [
      'move failed (NoValidHost)',
      'migrate',
      'clear_intent',
      state({ migration: { status: 'error', destCompute: null, destNode: null } }),
      true,
    ],
    [
      'live migration not scheduled yet',
      'live-migration',
      'schedule',
      state({ migration: { status: 'accepted', destCompute: null, destNode: null } }),
      true,
    ],
    ['unshelve not scheduled yet', 'unshelve', 'schedule', state({ instance: inst({ taskState: 'unshelving' }) }), true],
    ['unshelve scheduled', 'unshelve', 'cast', state({ instance: inst({ taskState: 'unshelving', buildHostList: [{} as never] }) }), true],
    ['unshelve spawning on its host', 'unshelve', 'clear_intent', state({ instance: inst({ taskState: 'spawning' }) }), true],
  ])('%s: %s -> %s', (_name, action, step, s, pending) => {
    expect(resumeStep(plan(action as string), s as ActionState, pending as boolean)).toBe(step);
  });
});
