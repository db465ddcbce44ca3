import { mulberry32 } from '@cellsched/prng';

/** Run-time fault injection of one compute process (set over the control endpoint). */
export interface FaultPlan {
  /** Share of builds that fail reschedulably (Nova's RescheduledException), 0..1. */
  readonly rescheduleRate: number;
  /** Share of builds that fail for good (Nova's BuildAbortException), 0..1. */
  readonly abortRate: number;
  /** Share of builds in which the process dies mid-build (SIGKILL itself), 0..1. */
  readonly crashRate: number;
  /** While true, new builds hang (never finish, never acked) until it is cleared. */
  readonly hang: boolean;
  /** Hosts on which every build fails reschedulably (a broken hypervisor: BuildFailureWeigher's case). */
  readonly failingHosts?: readonly string[];
  /**
   * Hosts on which new builds hang (in flight, counted in the host's io_workload: IoOpsWeigher's case) until the
   * host is taken off the list.
   */
  readonly hangingHosts?: readonly string[];
  /**
   * Faults of instance steps (issue 13), by step name (`prep_resize`, ...) or `*` for every step: a
   * step uses its own entry, else `*`'s, else none. Replaced whole by a PUT that names it.
   */
  readonly steps?: Readonly<Record<string, StepFault>>;
}

/** The faults of one step (or of every step: key `*`). */
export interface StepFault {
  /** Share of these steps that fail (reported with a failure), 0..1. */
  readonly failRate?: number;
  /** Share of these steps during which the process dies (SIGKILL itself), 0..1. */
  readonly crashRate?: number;
  /** While true, these steps hang (never finish, never acked) until it is cleared. */
  readonly hang?: boolean;
  /** Only on these hosts (default: every host of the process). */
  readonly hosts?: readonly string[];
}

/** The instance steps a compute carries out (InstanceStepRequest.step, the proto's list). */
export const STEP_NAMES: readonly string[] = Object.freeze([
  'power_off',
  'power_on',
  'reboot_soft',
  'reboot_hard',
  'rebuild',
  'shelve_offload',
  'unshelve',
  'prep_resize',
  'resize_instance',
  'finish_resize',
  'confirm_resize',
  'revert_resize',
  'finish_revert_resize',
  'pre_live_migration',
  'live_migration',
  'post_live_migration',
  'rollback_live_migration',
  'rebuild_evacuated',
  'destroy_evacuated',
]);

export const NO_FAULTS: FaultPlan = Object.freeze({ rescheduleRate: 0, abortRate: 0, crashRate: 0, hang: false });

export type BuildOutcome = 'succeed' | 'reschedule' | 'abort' | 'crash';

const isRate = (v: unknown): boolean => typeof v === 'number' && v >= 0 && v <= 1;

/** The problems of a `steps` map (all of them). Pure. */
function stepFaultProblems(steps: unknown): string[] {
  if (steps === null || typeof steps !== 'object' || Array.isArray(steps)) return ['steps must be an object of step name (or *) → faults'];
  const problems: string[] = [];
  for (const [step, f] of Object.entries(steps as Record<string, unknown>)) {
    if (step !== '*' && !STEP_NAMES.includes(step)) {
      problems.push(`steps: unknown step ${step}`);
      continue;
    }
    if (f === null || typeof f !== 'object' || Array.isArray(f)) {
      problems.push(`steps.${step} must be an object`);
      continue;
    }
    for (const [k, v] of Object.entries(f as Record<string, unknown>)) {
      if (k === 'failRate' || k === 'crashRate') {
        if (!isRate(v)) problems.push(`steps.${step}.${k} must be a number in [0, 1]`);
      } else if (k === 'hang') {
        if (typeof v !== 'boolean') problems.push(`steps.${step}.hang must be a boolean`);
      } else if (k === 'hosts') {
        if (!Array.isArray(v) || !v.every((h) => typeof h === 'string')) problems.push(`steps.${step}.hosts must be a list of host names`);
      } else problems.push(`steps.${step}: unknown field ${k}`);
    }
  }
  return problems;
}

/** Validates a partial plan update; returns the problems (all of them), empty when fine. Pure. */
export function faultPlanProblems(update: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [k, v] of Object.entries(update)) {
    if (k === 'hang') {
      if (typeof v !== 'boolean') problems.push('hang must be a boolean');
      continue;
    }
    if (k === 'steps') {
      problems.push(...stepFaultProblems(v));
      continue;
    }
    if (k === 'failingHosts' || k === 'hangingHosts') {
      if (!Array.isArray(v) || !v.every((h) => typeof h === 'string')) problems.push(`${k} must be a list of host names`);
      continue;
    }
    if (!['rescheduleRate', 'abortRate', 'crashRate'].includes(k)) {
      problems.push(`unknown field ${k}`);
      continue;
    }
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) problems.push(`${k} must be a number in [0, 1]`);
  }
  return problems;
}

/**
 * Picks a build's fate from one uniform draw in [0, 1): crash, then abort, then reschedule, else
 * success; on a failing host, a reschedule whatever the draw. Pure.
 */
export function decideOutcome(plan: FaultPlan, draw: number, host?: string): BuildOutcome {
  if (host !== undefined && plan.failingHosts?.includes(host) === true) return 'reschedule';
  if (draw < plan.crashRate) return 'crash';
  if (draw < plan.crashRate + plan.abortRate) return 'abort';
  if (draw < plan.crashRate + plan.abortRate + plan.rescheduleRate) return 'reschedule';
  return 'succeed';
}

/** A seeded PRNG (the shared mulberry32 of @cellsched/prng) so a fault run can be repeated. Pure given the seed. */
export function seededRandom(seed: number): () => number {
  return mulberry32(seed);
}

/** The faults that apply to `step` on `host`: its own entry, else `*`'s, when it names no hosts or this one. Pure. */
export function stepFaultOf(plan: FaultPlan, step: string, host: string): StepFault | undefined {
  const f = plan.steps?.[step] ?? plan.steps?.['*'];
  return f === undefined || (f.hosts !== undefined && !f.hosts.includes(host)) ? undefined : f;
}

export type StepOutcome = 'succeed' | 'fail' | 'crash';

/** A step's fate from one uniform draw in [0, 1): crash, then fail, else success. Pure. */
export function decideStepOutcome(plan: FaultPlan, step: string, host: string, draw: number): StepOutcome {
  const f = stepFaultOf(plan, step, host);
  const crash = f?.crashRate ?? 0;
  if (draw < crash) return 'crash';
  if (draw < crash + (f?.failRate ?? 0)) return 'fail';
  return 'succeed';
}

/** Whether a new build on `host` hangs under this plan (`hang`, or the host in `hangingHosts`). Pure. */
export function buildHangs(plan: FaultPlan, host: string): boolean {
  return plan.hang || plan.hangingHosts?.includes(host) === true;
}

/** Whether `step` on `host` hangs under this plan. Pure. */
export function stepHangs(plan: FaultPlan, step: string, host: string): boolean {
  return stepFaultOf(plan, step, host)?.hang === true;
}
