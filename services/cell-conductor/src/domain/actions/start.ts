/**
 * Taking an action (InstanceActionRequest): judged against the locked row, so a redelivered cast
 * re-sends the first step it already decided, a cast for a finished action changes nothing, and an
 * action the instance cannot take now is refused with its state put back (nothing left in a task
 * state, nothing left claimed for it).
 */
import type { Selection } from '@cellsched/wire';
import { ACTION, ACTION_PLANS, eventOf, MIGRATION_FINAL, planOf, rebootTaskState, STEP, TASK, type ActionName } from './steps';
import type { ActionRequest, ActionSnapshot, InstanceChange, MigrationChange, NextStep, PlacementOp, Transition } from './types';

/** What an action request amounts to. */
export type StartVerdict =
  /** Nothing to do: the instance is gone, the action is over, or it moved on past its first step. */
  | { readonly kind: 'ignore'; readonly reason: 'gone' | 'finished' | 'moved_on' }
  /** A redelivery before the first step's result: cast that step again. */
  | { readonly kind: 'recast' }
  /** Start it, or refuse it (the transition says which). */
  | { readonly kind: 'apply'; readonly transition: Transition; readonly refused: string | undefined };

/** The first step of an action, and what changes with it. */
interface FirstStep {
  readonly next: NextStep;
  readonly instance?: InstanceChange;
  readonly migration?: MigrationChange;
}

/** The task_state this action's request put on the instance (a reboot's depends on its type). Pure. */
export function expectedTaskState(req: ActionRequest): string | null {
  if (req.action === ACTION.reboot) return rebootTaskState(req.rebootType);
  return planOf(req.action)?.taskState ?? null;
}

/** The first step of each action. */
const FIRST_STEP: Readonly<Record<ActionName, string>> = {
  stop: STEP.powerOff,
  start: STEP.powerOn,
  reboot: STEP.rebootSoft,
  rebuild: STEP.rebuild,
  shelve: STEP.shelveOffload,
  shelveOffload: STEP.shelveOffload,
  unshelve: STEP.unshelve,
  migrate: STEP.prepResize,
  resize: STEP.prepResize,
  confirmResize: STEP.confirmResize,
  revertResize: STEP.revertResize,
  'live-migration': STEP.preLiveMigration,
  evacuate: STEP.rebuildEvacuated,
};

/** The first step's name (a hard reboot's is reboot_hard); undefined for an unknown action. Pure. */
export function firstStepName(req: ActionRequest): string | undefined {
  if (planOf(req.action) === undefined) return undefined;
  if (req.action === ACTION.reboot && req.rebootType === 'HARD') return STEP.rebootHard;
  return FIRST_STEP[req.action as ActionName];
}

function firstOnHost(req: ActionRequest, host: string): NextStep {
  return { step: firstStepName(req) ?? '', host, attempt: 1 };
}

/** The first step on the scheduler's destination (host_list[0], claimed by the super-conductor's scheduling). */
function firstOnDestination(snap: ActionSnapshot, req: ActionRequest, dest: Selection): FirstStep {
  const next = (step: string): NextStep => ({ step, host: dest.serviceHost, attempt: 1, hostList: req.hostList.slice(1) });
  const destChange = { destCompute: dest.serviceHost, destNode: dest.nodename };
  const { flavor } = snap.instance;
  switch (req.action as ActionName) {
    // NOTE: host and node set as the spawn starts (Nova: spawning, host set): a delete meanwhile terminates there
    case 'unshelve':
      return { next: next(STEP.unshelve), instance: { taskState: TASK.spawning, host: dest.serviceHost, node: dest.nodename } };
    case 'live-migration':
      return { next: next(STEP.preLiveMigration), migration: { ...destChange, status: 'preparing' } };
    case 'evacuate':
      return { next: next(STEP.rebuildEvacuated), migration: { ...destChange, status: 'pre-migrating' } };
    default:
      return { next: next(STEP.prepResize), migration: destChange, instance: { oldFlavor: flavor, newFlavor: req.newFlavor ?? flavor } };
  }
}

/** Why the instance cannot take this action now, or undefined when it can. Pure. */
export function startProblem(snap: ActionSnapshot, req: ActionRequest): string | undefined {
  const plan = planOf(req.action);
  const { instance: i, migration: m } = snap;
  if (plan === undefined) return `unknown action ${req.action}`;
  if (snap.task !== undefined) return `instance ${i.uuid} is busy with ${snap.task.action} (request ${snap.task.requestId})`;
  if (!plan.vmStates.includes(i.vmState)) return `Cannot '${req.action}' instance ${i.uuid} while it is in vm_state ${i.vmState}`;
  const task = expectedTaskState(req);
  if (i.taskState !== null && i.taskState !== task)
    return `Cannot '${req.action}' instance ${i.uuid} while it is in task_state ${i.taskState}`;
  if (req.action !== ACTION.unshelve && i.host === null) return `instance ${i.uuid} has no host`;
  if (plan.destinations && req.hostList.length === 0) return `no destination for ${req.action} of instance ${i.uuid}`;
  if (!plan.migration) return undefined;
  if (m === undefined || m.instanceUuid !== i.uuid) return `migration ${req.migrationUuid} of instance ${i.uuid} not found`;
  if (MIGRATION_FINAL.has(m.status)) return `migration ${m.uuid} is ${m.status}`;
  if (req.action === ACTION.confirmResize && !['finished', 'confirming'].includes(m.status))
    return `migration ${m.uuid} is ${m.status}, not finished`;
  if (req.action === ACTION.revertResize && !['finished', 'reverting'].includes(m.status))
    return `migration ${m.uuid} is ${m.status}, not finished`;
  if ((req.action === ACTION.confirmResize ? m.sourceCompute : m.destCompute) === null)
    return `migration ${m.uuid} has no ${req.action === ACTION.confirmResize ? 'source' : 'destination'}`;
  return undefined;
}

function firstStep(snap: ActionSnapshot, req: ActionRequest): FirstStep {
  const { instance: i, migration: m } = snap;
  if (req.action === ACTION.confirmResize)
    return { next: { step: STEP.confirmResize, host: m?.sourceCompute ?? '', attempt: 1 }, migration: { status: 'confirming' } };
  if (req.action === ACTION.revertResize)
    return { next: { step: STEP.revertResize, host: m?.destCompute ?? '', attempt: 1 }, migration: { status: 'reverting' } };
  const dest = req.hostList[0];
  if (planOf(req.action)?.destinations === true && dest !== undefined) return firstOnDestination(snap, req, dest);
  return { next: firstOnHost(req, i.host ?? '') };
}

/** The action's arguments every step of it is cast with (kept on the task). */
function paramsOf(req: ActionRequest): Record<string, string> {
  const p: Record<string, string> = {};
  if (req.rebootType !== '') p.reboot_type = req.rebootType;
  if (req.imageRef !== '') p.image_ref = req.imageRef;
  if (req.displayName !== '') p.display_name = req.displayName;
  // NOTE: an older sender's live migration has none: Nova's default since 2.25, auto
  if (req.action === ACTION.liveMigration) p.block_migration = req.blockMigration === '' ? 'auto' : req.blockMigration;
  return p;
}

/**
 * A refused action: its event Error and its instance action finished; the task_state it set is
 * cleared (with a fault) unless another action owns the instance; what the scheduling claimed for
 * it goes back (a move: RevertMove, migration `error`; an unshelve: the instance's claim released).
 */
export function refusal(snap: ActionSnapshot, req: ActionRequest, problem: string): Transition {
  const { instance: i, migration: m } = snap;
  const mine = snap.task === undefined && i.taskState !== null && i.taskState === expectedTaskState(req);
  const ownMigration =
    m !== undefined &&
    m.uuid === req.migrationUuid &&
    m.instanceUuid === i.uuid &&
    !MIGRATION_FINAL.has(m.status) &&
    snap.task?.migrationUuid !== m.uuid &&
    ['migrate', 'resize', 'live-migration', 'evacuate'].includes(req.action);
  const placement: PlacementOp[] = [];
  if (ownMigration) placement.push({ op: 'revert_move' });
  if (req.action === ACTION.unshelve && snap.task === undefined && i.vmState === 'shelved_offloaded')
    placement.push({ op: 'release_instance' });
  const step = firstStepName(req);
  const firstEvent = step === undefined ? `conductor_${req.action}` : eventOf(req.action, step);
  return {
    placement,
    ...(mine ? { instance: { taskState: null }, fault: { message: problem, host: i.host, details: null } } : {}),
    ...(ownMigration ? { migration: { status: 'error' } } : {}),
    events: [{ event: firstEvent, host: null, ok: false, details: problem }],
    task: { kind: 'refused' },
  };
}

/**
 * Judges an action request against the locked row (undefined: the instance is gone). Idempotent per
 * (instance, request id): a redelivery while the first step is in flight re-sends it; one after the
 * action moved on or ended changes nothing. Pure.
 */
export function judgeActionRequest(snap: ActionSnapshot | undefined, req: ActionRequest): StartVerdict {
  if (snap === undefined) return { kind: 'ignore', reason: 'gone' };
  const { task } = snap;
  if (task !== undefined && task.requestId === req.requestId)
    return task.enteredBy === 'action' ? { kind: 'recast' } : { kind: 'ignore', reason: 'moved_on' };
  if (snap.actionFinished) return { kind: 'ignore', reason: 'finished' };
  const problem = startProblem(snap, req);
  if (problem !== undefined) return { kind: 'apply', transition: refusal(snap, req, problem), refused: problem };
  const first = firstStep(snap, req);
  const taskState = expectedTaskState(req);
  return {
    kind: 'apply',
    refused: undefined,
    transition: {
      instance: { ...(snap.instance.taskState === null && taskState !== null ? { taskState } : {}), ...first.instance },
      ...(first.migration === undefined ? {} : { migration: first.migration }),
      task: {
        kind: 'start',
        next: first.next,
        migrationUuid: ACTION_PLANS[req.action as ActionName].migration ? req.migrationUuid : null,
        requestSpec: req.requestSpec,
        params: paramsOf(req),
        priorVmState: snap.instance.vmState,
      },
    },
  };
}
