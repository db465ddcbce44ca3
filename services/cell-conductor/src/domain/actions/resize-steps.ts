/**
 * Cold migrate and resize, step by step: prep_resize on the destination, resize_instance on the
 * source, finish_resize on the destination -> VERIFY_RESIZE; then confirm (confirm_resize on the
 * source) or revert (revert_resize on the destination, finish_revert_resize on the source), and a
 * failed move's rollback the same way. Placement: the super-conductor's scheduling claimed the
 * destination with ClaimMove (the source allocation is the migration's); an alternate is claimed
 * the same way; a failed move and a revert put the source back with RevertMove; confirm releases
 * the migration.
 */
import { ACTION, POWER, STEP, TASK } from './steps';
import type { StepHandler } from './lifecycle-steps';
import { onDestinationFailure } from './move-destination';
import { advanceTo, backOnSource, destOf, done, failed, moveFailed, runningAs, sourceOf, stepEvent, type StepContext } from './transitions';
import type { Transition } from './types';

/** Whether this revert step is a failed move's rollback (not the user's revertResize). */
const rollingBack = (c: StepContext): boolean => c.task.action !== ACTION.revertResize;

/** The rollback of a cold move or a user revert could not finish: back on the source in ERROR (RevertMove), the migration `error`. */
function revertFailed(c: StepContext, reason: string, terminate: readonly string[]): Transition {
  const why = rollingBack(c) ? `${c.task.failure ?? 'move failed'}; rollback failed: ${reason}` : reason;
  return failed(c, why, {
    placement: [{ op: 'revert_move' }],
    migration: { status: 'error' },
    instance: { ...backOnSource(c), vmState: 'error' },
    ...(terminate.length > 0 ? { terminate } : {}),
  });
}

/** The resize is confirmed: ACTIVE (or SHUTOFF) on the destination, the migration `confirmed` and its source allocation released. */
function confirmed(c: StepContext): Transition {
  return done(c, {
    placement: [{ op: 'release_migration' }],
    migration: { status: 'confirmed' },
    instance: { vmState: runningAs('resized', c.instance.powerState).vmState, taskState: null, oldFlavor: null, newFlavor: null },
  });
}

/**
 * The source never answered the confirm (gone, forced down, or silent past the step deadline). The
 * instance already runs on the destination, so the resize is confirmed without it, as Nova's confirm
 * drops the source allocation whatever happens there: nothing is left waiting on a dead host. The
 * source's copy goes with a terminate queued on its host, taken when its compute is back. The
 * event is in Error with why.
 */
function confirmedWithoutSource(c: StepContext, reason: string): Transition {
  const src = sourceOf(c).host;
  const details = `${reason}; confirmed without the source: its copy on ${src} is destroyed when that host takes its casts again`;
  return { ...confirmed(c), events: [stepEvent(c, false, details)], terminate: [src] };
}

export const RESIZE_STEPS: Readonly<Record<string, StepHandler>> = {
  [STEP.prepResize]: {
    ok: (c) =>
      advanceTo(
        c,
        { step: STEP.resizeInstance, host: sourceOf(c).host, attempt: c.task.attempt },
        { migration: { status: 'migrating' }, instance: { taskState: TASK.resizeMigrating } },
      ),
    fail: onDestinationFailure,
  },
  // NOTE: the instance's host flips to the destination once the source has sent it (Nova's resize_migrated)
  [STEP.resizeInstance]: {
    ok: (c) =>
      advanceTo(
        c,
        { step: STEP.finishResize, host: destOf(c).host, attempt: c.task.attempt },
        {
          migration: { status: 'post-migrating' },
          instance: { taskState: TASK.resizeMigrated, host: destOf(c).host, node: destOf(c).node },
        },
      ),
    fail: (c, reason) => moveFailed(c, reason),
  },
  [STEP.finishResize]: {
    ok: (c) =>
      done(c, {
        migration: { status: 'finished' },
        instance: {
          vmState: 'resized',
          taskState: null,
          flavor: c.instance.newFlavor ?? c.instance.flavor,
          powerState: runningAs(c.task.priorVmState, POWER.running).powerState,
        },
      }),
    // NOTE: the guest may half exist on the destination: revert it there, then power the source's on
    fail: (c, reason) =>
      advanceTo(
        c,
        { step: STEP.revertResize, host: destOf(c).host, attempt: c.task.attempt, failure: reason },
        { instance: { taskState: TASK.resizeReverting }, failedWith: reason },
      ),
  },
  [STEP.confirmResize]: {
    ok: confirmed,
    // NOTE: the source's compute failed it: still VERIFY_RESIZE, the user (or the auto-confirm) may confirm again, or revert
    fail: (c, reason, unreachable) =>
      unreachable ? confirmedWithoutSource(c, reason) : failed(c, reason, { migration: { status: 'finished' } }),
  },
  [STEP.revertResize]: {
    ok: (c) => advanceTo(c, { step: STEP.finishRevertResize, host: sourceOf(c).host, attempt: c.task.attempt }),
    fail: (c, reason) =>
      rollingBack(c) ? revertFailed(c, reason, [destOf(c).host]) : failed(c, reason, { migration: { status: 'finished' } }),
  },
  [STEP.finishRevertResize]: {
    ok: (c) =>
      rollingBack(c)
        ? {
            ...moveFailed(c, c.task.failure ?? 'move failed'),
            instance: { ...backOnSource(c), vmState: c.task.priorVmState, taskState: null },
            events: [stepEvent(c, true)],
          }
        : done(c, {
            placement: [{ op: 'revert_move' }],
            migration: { status: 'reverted' },
            instance: { ...backOnSource(c), vmState: runningAs('resized', c.instance.powerState).vmState, taskState: null },
          }),
    fail: (c, reason) => revertFailed(c, reason, []),
  },
};
