/**
 * Nova's server actions as the super-conductor applies them (nova/compute/api.py's
 * check_instance_state guards and task states, nova/conductor/manager.py's events), as data, and
 * the pure decisions of one `server_action` cast: its plan, and what a (redelivered) cast still has
 * to do given what the cell holds.
 */
import { createHash } from 'node:crypto';
import type { Flavor, ServerActionRequest } from '@cellsched/wire';
import type { ActionBegin, ActionInstance, ActionState } from '../ports';

/** What the super-conductor does with an action once its guard held. */
export type ActionKind =
  /** Forwarded to the cell conductor as it is (the instance stays on its host). */
  | 'lifecycle'
  /** A migration record, SelectDestinations with a MoveContext (ClaimMove), then the cell conductor. */
  | 'move'
  /** A plain SelectDestinations in the instance's cell (the offloaded instance holds nothing), then the cell conductor. */
  | 'unshelve';

export type MigrationType = 'migration' | 'resize' | 'live-migration' | 'evacuation';

/** One action: Nova's guard, the task_state it sets, the events the conductor records. */
export interface ActionDef {
  readonly kind: ActionKind;
  /** vm_states it may start from (Nova's `check_instance_state(vm_state=...)`). */
  readonly vmStates: readonly string[];
  /** The task_state it sets at once; null for none (confirmResize). */
  readonly taskState: string | null;
  /** task_states besides none it may start from. */
  readonly alsoFrom?: readonly string[];
  /** Nova's conductor events (host = the conductor), started with the action, ended when it is cast. */
  readonly conductorEvents: readonly string[];
  /** The compute's event of a forwarded action: a refused guard is recorded on it when there is no conductor event. */
  readonly computeEvent?: string;
  /** A move's migration record: its type and first status. */
  readonly migration?: { readonly type: MigrationType; readonly status: string };
}

const ACTIVE_STOPPED = ['active', 'stopped'];
const HARD_REBOOT_FROM = ['active', 'stopped', 'paused', 'suspended', 'error'];

/** The actions by Nova's instance action name (`reboot` is resolved by its type, see {@link actionDef}). */
const ACTIONS: Readonly<Record<string, ActionDef>> = {
  stop: {
    kind: 'lifecycle',
    vmStates: ['active', 'rescued', 'error'],
    taskState: 'powering-off',
    conductorEvents: [],
    computeEvent: 'compute_stop_instance',
  },
  start: {
    kind: 'lifecycle',
    vmStates: ['stopped'],
    taskState: 'powering-on',
    conductorEvents: [],
    computeEvent: 'compute_start_instance',
  },
  rebuild: { kind: 'lifecycle', vmStates: ['active', 'stopped', 'error'], taskState: 'rebuilding', conductorEvents: ['rebuild_server'] },
  confirmResize: { kind: 'lifecycle', vmStates: ['resized'], taskState: null, conductorEvents: [], computeEvent: 'compute_confirm_resize' },
  revertResize: {
    kind: 'lifecycle',
    vmStates: ['resized'],
    taskState: 'resize_reverting',
    conductorEvents: [],
    computeEvent: 'compute_revert_resize',
  },
  shelve: {
    kind: 'lifecycle',
    vmStates: ['active', 'stopped', 'paused', 'suspended'],
    taskState: 'shelving',
    conductorEvents: [],
    computeEvent: 'compute_shelve_instance',
  },
  shelveOffload: {
    kind: 'lifecycle',
    vmStates: ['shelved'],
    taskState: 'shelving_offloading',
    conductorEvents: [],
    computeEvent: 'compute_shelve_offload_instance',
  },
  migrate: {
    kind: 'move',
    vmStates: ACTIVE_STOPPED,
    taskState: 'resize_prep',
    conductorEvents: ['conductor_migrate_server', 'cold_migrate'],
    migration: { type: 'migration', status: 'pre-migrating' },
  },
  resize: {
    kind: 'move',
    vmStates: ACTIVE_STOPPED,
    taskState: 'resize_prep',
    conductorEvents: ['conductor_migrate_server', 'cold_migrate'],
    migration: { type: 'resize', status: 'pre-migrating' },
  },
  'live-migration': {
    kind: 'move',
    vmStates: ['active', 'paused'],
    taskState: 'migrating',
    conductorEvents: ['conductor_live_migrate_instance'],
    migration: { type: 'live-migration', status: 'accepted' },
  },
  evacuate: {
    kind: 'move',
    vmStates: ['active', 'stopped', 'error'],
    taskState: 'rebuilding',
    conductorEvents: ['rebuild_server'],
    migration: { type: 'evacuation', status: 'accepted' },
  },
  unshelve: {
    kind: 'unshelve',
    vmStates: ['shelved', 'shelved_offloaded'],
    taskState: 'unshelving',
    conductorEvents: ['schedule_instances'],
  },
};

const REBOOTS: Readonly<Record<string, ActionDef>> = {
  SOFT: { kind: 'lifecycle', vmStates: ['active'], taskState: 'rebooting', conductorEvents: [], computeEvent: 'compute_reboot_instance' },
  // NOTE: Nova lets a hard reboot take over a soft one in progress (check_instance_state's task_state list).
  HARD: {
    kind: 'lifecycle',
    vmStates: HARD_REBOOT_FROM,
    taskState: 'rebooting_hard',
    alsoFrom: ['rebooting', 'reboot_pending', 'reboot_started'],
    conductorEvents: [],
    computeEvent: 'compute_reboot_instance',
  },
};

/** The action's definition, or undefined for an action (or reboot type) this super-conductor does not know. Pure. */
export function actionDef(action: string, rebootType: string): ActionDef | undefined {
  if (action === 'reboot') return REBOOTS[rebootType === '' ? 'SOFT' : rebootType];
  return Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
}

/** RFC 4122 name-based (v5, SHA-1) uuid of `name` in `namespace`. Pure. */
function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The namespace of migration uuids derived from a request. */
const MIGRATION_NAMESPACE = '8c5f3c2e-6a41-4f0e-9d1b-2f6c1e9a7b30';

/**
 * The migration uuid of a move request: derived from the instance and the request id, so every
 * delivery of the cast (and the API's re-cast of a lost one) names the same migration and the same
 * placement consumer; a new request on the same instance gets another. Pure.
 */
export function migrationUuidFor(instanceUuid: string, requestId: string): string {
  return uuidV5(MIGRATION_NAMESPACE, `${instanceUuid.toLowerCase()}/${requestId}`);
}

/** One cast's action, resolved. */
export interface ActionPlan {
  readonly def: ActionDef;
  readonly req: ServerActionRequest;
  /** A move's migration uuid (undefined otherwise). */
  readonly migrationUuid: string | undefined;
}

/** The plan of a cast, or why it cannot have one (unknown action, no instance or request id). Pure. */
export function planServerAction(req: ServerActionRequest): ActionPlan | { readonly invalid: string } {
  if (req.instanceUuid === '' || req.requestId === '' || req.cellUuid === '')
    return { invalid: 'instance_uuid, cell_uuid and request_id are required' };
  const def = actionDef(req.action, req.rebootType);
  if (def === undefined)
    return { invalid: `unknown server action "${req.action}"${req.action === 'reboot' ? ` (reboot_type "${req.rebootType}")` : ''}` };
  if (req.action === 'resize' && req.flavor === undefined) return { invalid: 'resize without a flavor' };
  return { def, req, migrationUuid: def.migration === undefined ? undefined : migrationUuidFor(req.instanceUuid, req.requestId) };
}

/**
 * Nova's `old_instance_type_id` / `new_instance_type_id` of a move's migration record: the
 * flavors' integer ids (`Flavor.id`; 0, not known, is null). A resize goes from the instance's
 * flavor to `resizeTo`; a cold or live migration names the instance's flavor twice (Nova's
 * conductor); an evacuation none (Nova's API creates its record without them). Pure.
 */
export function instanceTypeIds(
  type: MigrationType,
  current: Flavor,
  resizeTo: Flavor | undefined,
): { old: number | null; new: number | null } {
  if (type === 'evacuation') return { old: null, new: null };
  const idOf = (f: Flavor | undefined): number | null => (f === undefined || f.id === 0 ? null : f.id);
  const old = idOf(current);
  return { old, new: type === 'resize' ? idOf(resizeTo) : old };
}

/** The guarded start of the plan (see {@link ActionBegin}). `instanceHost`: where a refused compute event is recorded. Pure. */
export function beginOf(plan: ActionPlan, conductorHost: string, instanceHost: string | null): ActionBegin {
  const { def, req } = plan;
  const refusedOnConductor = def.conductorEvents.length > 0;
  return {
    instanceUuid: req.instanceUuid,
    requestId: req.requestId,
    action: req.action,
    userId: req.userId,
    projectId: req.projectId,
    // NOTE: not its own task_state: a second delivery of this request never gets here (its action exists), another request must not pass.
    vmStates: def.vmStates,
    fromTaskStates: [null, ...(def.alsoFrom ?? [])],
    taskState: def.taskState,
    events: def.conductorEvents,
    conductorHost,
    migration:
      def.migration === undefined || plan.migrationUuid === undefined
        ? undefined
        : {
            uuid: plan.migrationUuid,
            ...def.migration,
            instanceTypeIds: (current) => instanceTypeIds(def.migration?.type ?? 'migration', current, req.flavor),
          },
    // NOTE: the row's host list is this request's from here on (an earlier unshelve or move left its own)
    clearHostList: def.kind !== 'lifecycle',
    refusedEvent: refusedOnConductor ? (def.conductorEvents[0] as string) : (def.computeEvent ?? req.action),
    refusedEventHost: refusedOnConductor ? conductorHost : instanceHost,
    refusedDetails: (i) => invalidStateMessage(plan, i),
  };
}

/** What a cast still has to do. */
export type ActionStep =
  /** Nothing recorded yet: the guarded begin. */
  | 'begin'
  /** Guard held, no destination yet: ask the scheduler (again: it is idempotent per instance and migration). */
  | 'schedule'
  /** Destination recorded (or a lifecycle action): cast to the cell conductor (it dedups per request). */
  | 'cast'
  /** The action is settled (refused, failed, or moved on by the cell): only the intent is left to clear. */
  | 'clear_intent'
  /** The instance is gone. */
  | 'gone';

/**
 * Where a (possibly redelivered) cast resumes, from what the cell holds. The intent is cleared
 * only after everything else, so a cast whose intent is already gone was carried out by an
 * earlier delivery, or given up by the api (`clear_intent`: nothing to do, the clear is
 * idempotent). Pure.
 */
export function resumeStep(plan: ActionPlan, s: ActionState, intentPending: boolean): ActionStep {
  // NOTE: no action recorded and no intent: the api gave the request up (its intent expired) or
  // the server is gone; a late delivery must not start what the user was told was abandoned.
  if (s.action === undefined) return s.instance === undefined ? 'gone' : intentPending ? 'begin' : 'clear_intent';
  if (!intentPending || s.action.failed) return 'clear_intent';
  if (s.instance === undefined) return 'gone';
  const { def } = plan;
  if (def.kind === 'lifecycle') return def.taskState === null || s.instance.taskState === def.taskState ? 'cast' : 'clear_intent';
  if (def.kind === 'unshelve') {
    if (s.instance.taskState !== def.taskState) return 'clear_intent';
    return s.instance.buildHostList.length > 0 ? 'cast' : 'schedule';
  }
  const m = s.migration;
  if (m === undefined || m.status !== def.migration?.status) return 'clear_intent';
  return m.destCompute === null ? 'schedule' : 'cast';
}

/** Nova's InstanceInvalidState message, the details of a refused guard's event. */
export function invalidStateMessage(plan: ActionPlan, i: ActionInstance): string {
  const def = plan.def;
  if (!def.vmStates.includes(i.vmState)) return `Cannot '${plan.req.action}' instance ${i.uuid} while it is in vm_state ${i.vmState}`;
  return `Cannot '${plan.req.action}' instance ${i.uuid} while it is in task_state ${i.taskState ?? 'None'}`;
}
