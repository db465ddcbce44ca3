/**
 * Live migration, step by step: pre_live_migration on the destination, live_migration and
 * post_live_migration on the source; a failure rolls back on the destination. Placement: the
 * destination was claimed with ClaimMove; a finished live migration releases the migration (the
 * source allocation), a failed one puts the source back with RevertMove.
 */
import { STEP } from './steps';
import type { StepHandler } from './lifecycle-steps';
import { onDestinationFailure } from './move-destination';
import { advanceTo, destOf, done, moveFailed, sourceOf, stepEvent, type StepContext } from './transitions';
import type { Transition } from './types';

export const LIVE_MIGRATION_STEPS: Readonly<Record<string, StepHandler>> = {
  [STEP.preLiveMigration]: {
    ok: (c) =>
      advanceTo(c, { step: STEP.liveMigration, host: sourceOf(c).host, attempt: c.task.attempt }, { migration: { status: 'running' } }),
    fail: onDestinationFailure,
  },
  [STEP.liveMigration]: {
    ok: (c) => advanceTo(c, { step: STEP.postLiveMigration, host: sourceOf(c).host, attempt: c.task.attempt }),
    fail: (c, reason) =>
      advanceTo(
        c,
        { step: STEP.rollbackLiveMigration, host: destOf(c).host, attempt: c.task.attempt, failure: reason },
        { failedWith: reason },
      ),
  },
  [STEP.postLiveMigration]: {
    ok: (c) => liveMigrated(c, []),
    // NOTE: the guest runs on the destination already; the source's copy goes with a terminate
    fail: (c, reason) => ({ ...liveMigrated(c, [sourceOf(c).host]), events: [stepEvent(c, false, reason)] }),
  },
  [STEP.rollbackLiveMigration]: {
    ok: (c) => ({ ...moveFailed(c, c.task.failure ?? 'live migration failed'), events: [stepEvent(c, true)] }),
    fail: (c, reason) =>
      moveFailed(c, `${c.task.failure ?? 'live migration failed'}; rollback failed: ${reason}`, { terminate: [destOf(c).host] }),
  },
};

/** A live migration is over: the instance is on the destination, the migration's source allocation released. */
function liveMigrated(c: StepContext, terminate: readonly string[]): Transition {
  const d = destOf(c);
  return {
    ...done(c, {
      placement: [{ op: 'release_migration' }],
      migration: { status: 'completed' },
      instance: { host: d.host, node: d.node, taskState: null, vmState: c.task.priorVmState },
    }),
    ...(terminate.length > 0 ? { terminate } : {}),
  };
}
