/**
 * Building blocks of the step transitions: the context a step result is judged in, the events it
 * records, and the common endings (done, a failed action put back, a failed move reverted).
 */
import type { Selection } from '@cellsched/wire';
import { eventOf, POWER, STEP } from './steps';
import type {
  ActionInstance,
  ActionTask,
  Fault,
  InstanceChange,
  MigrationChange,
  MigrationView,
  NextStep,
  PlacementOp,
  StepEvent,
  Transition,
} from './types';

/** The current step of an action, as a result is judged against it. */
export interface StepContext {
  readonly instance: ActionInstance;
  readonly task: ActionTask;
  readonly migration: MigrationView | undefined;
}

/** A destination step failed and the task has alternates: claim them in order (the flow does), then {@link afterAlternates}. */
export interface AlternatesNeeded {
  readonly kind: 'alternates';
  /** `move`: ClaimMove (the migration keeps the source); `instance`: a replace-claim of the instance (unshelve). */
  readonly claim: 'move' | 'instance';
  readonly alternates: readonly Selection[];
  readonly reason: string;
}

/** What a step's result leads to. */
export type StepOutcome = Transition | AlternatesNeeded;

/** The host an event of this step is recorded on (`post_live_migration` as Nova's `…_at_destination`). Pure. */
export function eventHostOf(c: StepContext): string {
  return c.task.step === STEP.postLiveMigration ? (c.migration?.destCompute ?? c.task.stepHost) : c.task.stepHost;
}

/** The current step's event. Pure. */
export function stepEvent(c: StepContext, ok: boolean, details?: string): StepEvent {
  return { event: eventOf(c.task.action, c.task.step), host: eventHostOf(c), ok, ...(details === undefined ? {} : { details }) };
}

export function sourceOf(c: StepContext): { readonly host: string; readonly node: string | null } {
  return { host: c.migration?.sourceCompute ?? c.instance.host ?? '', node: c.migration?.sourceNode ?? null };
}

export function destOf(c: StepContext): { readonly host: string; readonly node: string | null } {
  return { host: c.migration?.destCompute ?? c.task.stepHost, node: c.migration?.destNode ?? null };
}

/** The vm_state and power state of an instance that runs (or not) as before. Pure. */
export function runningAs(prior: string, powerState: number): { readonly vmState: 'active' | 'stopped'; readonly powerState: number } {
  const stopped = prior === 'stopped' || powerState === POWER.shutdown;
  return stopped ? { vmState: 'stopped', powerState: POWER.shutdown } : { vmState: 'active', powerState: POWER.running };
}

/** The action goes on with `next` (the step succeeded, or failed with `failedWith` and the action rolls back). */
export function advanceTo(
  c: StepContext,
  next: NextStep,
  more: { instance?: InstanceChange; migration?: MigrationChange; failedWith?: string } = {},
): Transition {
  const { failedWith, ...rest } = more;
  return {
    ...rest,
    events: [failedWith === undefined ? stepEvent(c, true) : stepEvent(c, false, failedWith)],
    task: { kind: 'advance', next },
  };
}

/** The step succeeded and the action is done. */
export function done(
  c: StepContext,
  more: { instance?: InstanceChange; migration?: MigrationChange; placement?: readonly PlacementOp[] } = {},
): Transition {
  return { ...more, events: [stepEvent(c, true)], task: { kind: 'end' } };
}

/** The step failed and the action ends: the instance as `instance` says (task_state cleared), a fault, the event Error. */
export function failed(
  c: StepContext,
  reason: string,
  more: {
    instance?: InstanceChange;
    migration?: MigrationChange;
    placement?: readonly PlacementOp[];
    terminate?: readonly string[];
    fault?: Fault;
  } = {},
): Transition {
  const { fault, ...rest } = more;
  return {
    ...rest,
    instance: { taskState: null, ...more.instance },
    fault: fault ?? { message: reason, host: c.task.stepHost, details: null },
    events: [stepEvent(c, false, reason)],
    task: { kind: 'end' },
  };
}

/**
 * A move that cannot go on (no destination left, or the source failed before anything moved): the
 * migration's allocations go back to the instance (RevertMove), the migration is `error`, the
 * instance is as before the move on its source (flavor unchanged), with a fault.
 */
export function moveFailed(
  c: StepContext,
  reason: string,
  o: { readonly terminate?: readonly string[]; readonly fault?: Fault } = {},
): Transition {
  return failed(c, reason, {
    placement: [{ op: 'revert_move' }],
    migration: { status: 'error' },
    instance: { vmState: c.task.priorVmState, oldFlavor: null, newFlavor: null },
    ...(o.terminate === undefined || o.terminate.length === 0 ? {} : { terminate: o.terminate }),
    ...(o.fault === undefined ? {} : { fault: o.fault }),
  });
}

/**
 * A cold move rolled back onto its source (a failed finish_resize's revert, or a user revert):
 * the source gets the instance back (host, node, old flavor), RevertMove in placement.
 */
export function backOnSource(c: StepContext): InstanceChange {
  const src = sourceOf(c);
  return { host: src.host, node: src.node, flavor: c.instance.oldFlavor ?? c.instance.flavor, oldFlavor: null, newFlavor: null };
}

/**
 * The fault of an action whose destinations were all tried (Nova's MaxRetriesExceeded), the last
 * failure and the alternates dropped in its details. Pure.
 */
export function exhaustedFault(c: StepContext, reason: string, skipped: readonly string[]): Fault {
  const dropped = skipped.length === 0 ? '' : `; alternates dropped: ${skipped.join('; ')}`;
  return {
    message: `Exceeded maximum number of retries. Exhausted all hosts available for retrying ${c.task.action} failures for instance ${c.instance.uuid}.`,
    host: c.task.stepHost,
    details: `last failure on ${c.task.stepHost}: ${reason}${dropped}`,
  };
}
