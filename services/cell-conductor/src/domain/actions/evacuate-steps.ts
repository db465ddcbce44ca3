/**
 * Evacuation, step by step: rebuild_evacuated on the destination. Placement: the destination was
 * claimed with ClaimMove; the migration keeps the source allocation until the source is heard
 * from (destroy_evacuated, in the cleanup after a move).
 */
import { POWER, STEP } from './steps';
import type { StepHandler } from './lifecycle-steps';
import { onDestinationFailure } from './move-destination';
import { destOf, done, runningAs } from './transitions';

export const EVACUATE_STEPS: Readonly<Record<string, StepHandler>> = {
  // NOTE: `done`, not `completed`: the migration keeps the source allocation until the source is heard from (destroy_evacuated)
  [STEP.rebuildEvacuated]: {
    ok: (c) =>
      done(c, {
        migration: { status: 'done' },
        instance: { ...runningAs(c.task.priorVmState, POWER.running), taskState: null, host: destOf(c).host, node: destOf(c).node },
      }),
    fail: onDestinationFailure,
  },
};
