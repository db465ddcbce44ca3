/**
 * Actions that stay on the instance's host (stop, start, reboot, rebuild, shelve/shelveOffload) and
 * unshelve, step by step. Placement changes only for shelve (the instance's allocation released:
 * SHELVED_OFFLOADED holds nothing) and unshelve (claimed by the scheduler; an alternate replaces it).
 */
import { POWER, STEP } from './steps';
import { done, exhaustedFault, failed, runningAs, type StepContext, type StepOutcome } from './transitions';
import type { Transition } from './types';

/** How one step's success and failure move its action on. */
export interface StepHandler {
  ok(c: StepContext): StepOutcome;
  /** `unreachable`: the host never answered (the step watchdog, a cast the broker refused, a host no compute serves: advance.ts), as opposed to its compute failing the step. */
  fail(c: StepContext, reason: string, unreachable: boolean): StepOutcome;
}

/** A failed lifecycle step (Nova's reverts_task_state): vm_state as before, task_state cleared, a fault. */
const putBack = (c: StepContext, reason: string): Transition => failed(c, reason, { instance: { vmState: c.task.priorVmState } });

const onHost = (ok: (c: StepContext) => Transition): StepHandler => ({ ok, fail: putBack });

export const LIFECYCLE_STEPS: Readonly<Record<string, StepHandler>> = {
  [STEP.powerOff]: onHost((c) => done(c, { instance: { vmState: 'stopped', powerState: POWER.shutdown, taskState: null } })),
  [STEP.powerOn]: onHost((c) => done(c, { instance: { vmState: 'active', powerState: POWER.running, taskState: null } })),
  [STEP.rebootSoft]: onHost((c) => done(c, { instance: { vmState: 'active', powerState: POWER.running, taskState: null } })),
  [STEP.rebootHard]: onHost((c) => done(c, { instance: { vmState: 'active', powerState: POWER.running, taskState: null } })),
  // NOTE: Nova keeps a stopped instance stopped through a rebuild
  [STEP.rebuild]: onHost((c) =>
    done(c, {
      instance: {
        ...runningAs(c.task.priorVmState, POWER.running),
        taskState: null,
        ...(c.task.params.image_ref === undefined ? {} : { imageRef: c.task.params.image_ref }),
        ...(c.task.params.display_name === undefined ? {} : { displayName: c.task.params.display_name }),
      },
    }),
  ),
  // NOTE: shelve offloads at once (Nova's default shelved_offload_time = 0): nothing held, no host
  [STEP.shelveOffload]: onHost((c) =>
    done(c, {
      placement: [{ op: 'release_instance' }],
      instance: { vmState: 'shelved_offloaded', powerState: POWER.shutdown, taskState: null, host: null, node: null },
    }),
  ),
  [STEP.unshelve]: {
    ok: (c) => done(c, { instance: { vmState: 'active', powerState: POWER.running, taskState: null } }),
    fail: (c, reason) =>
      c.task.hostList.length > 0
        ? { kind: 'alternates', claim: 'instance', alternates: c.task.hostList, reason }
        : unshelveFailed(c, reason, []),
  },
};

/** No host could unshelve it: back to SHELVED_OFFLOADED holding nothing, with a fault. */
export function unshelveFailed(c: StepContext, reason: string, skipped: readonly string[]): Transition {
  return failed(c, reason, {
    placement: [{ op: 'release_instance' }],
    instance: { vmState: 'shelved_offloaded', powerState: POWER.shutdown, host: null, node: null },
    ...(skipped.length > 0 || c.task.attempt > 1 ? { fault: exhaustedFault(c, reason, skipped) } : {}),
  });
}
