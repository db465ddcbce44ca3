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
}

export const NO_FAULTS: FaultPlan = Object.freeze({ rescheduleRate: 0, abortRate: 0, crashRate: 0, hang: false });

export type BuildOutcome = 'succeed' | 'reschedule' | 'abort' | 'crash';

/** Validates a partial plan update; returns the problems (all of them), empty when fine. Pure. */
export function faultPlanProblems(update: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [k, v] of Object.entries(update)) {
    if (k === 'hang') { if (typeof v !== 'boolean') problems.push('hang must be a boolean'); continue; }
    if (!['rescheduleRate', 'abortRate', 'crashRate'].includes(k)) { problems.push(`unknown field ${k}`); continue; }
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) problems.push(`${k} must be a number in [0, 1]`);
  }
  return problems;
}

/** Picks a build's fate from one uniform draw in [0, 1): crash, then abort, then reschedule, else success. Pure. */
export function decideOutcome(plan: FaultPlan, draw: number): BuildOutcome {
  if (draw < plan.crashRate) return 'crash';
  if (draw < plan.crashRate + plan.abortRate) return 'abort';
  if (draw < plan.crashRate + plan.abortRate + plan.rescheduleRate) return 'reschedule';
  return 'succeed';
}

/** A seeded PRNG (mulberry32) so a fault run can be repeated. Pure given the seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
