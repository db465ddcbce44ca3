/**
 * What every move does when a step on its destination fails: the next alternate (ClaimMove), or
 * the move fails when none is left. Shared by the resize, live migration and evacuation steps.
 */
import { exhaustedFault, moveFailed, type StepContext, type StepOutcome } from './transitions';

/** A destination step failed: the next alternate (ClaimMove), or the move fails when none is left (MaxRetriesExceeded once one was retried). */
export function onDestinationFailure(c: StepContext, reason: string): StepOutcome {
  if (c.task.hostList.length > 0) return { kind: 'alternates', claim: 'move', alternates: c.task.hostList, reason };
  return moveFailed(c, reason, c.task.attempt > 1 ? { fault: exhaustedFault(c, reason, []) } : {});
}
