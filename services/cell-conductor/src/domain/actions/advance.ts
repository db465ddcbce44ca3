/**
 * Moving an action on from one step's report (a compute's InstanceStepResult, a cast the broker
 * refused, the step watchdog): judged against the locked row by (request id, step, host, attempt),
 * so a late or repeated report changes nothing, and a redelivery of the report that advanced the
 * task re-sends the step it decided (its cast may have been lost).
 */
import { FAILURE_CODES } from '@cellsched/wire';
import type { RescheduleDecision } from '../reschedule';
import { LIFECYCLE_STEPS, unshelveFailed, type StepHandler } from './lifecycle-steps';
import { EVACUATE_STEPS } from './evacuate-steps';
import { LIVE_MIGRATION_STEPS } from './live-migration-steps';
import { RESIZE_STEPS } from './resize-steps';
import { GUEST_CREATING_STEPS, MIGRATION_FINAL, stepKey } from './steps';
import { exhaustedFault, moveFailed, stepEvent, type AlternatesNeeded, type StepContext } from './transitions';
import type { ActionSnapshot, StepReport, Transition } from './types';

/** What a step report amounts to. */
export type StepVerdict =
  /** The instance is gone (deleted during the action): its migration's claim and the reporting host's guest must go. */
  | { readonly kind: 'orphan' }
  /** Nothing to decide: a late or repeated report. `terminate`: hosts where it left a guest the instance does not live on. */
  | { readonly kind: 'ignore'; readonly reason: 'stale' | 'no_task'; readonly terminate: readonly string[] }
  /** A redelivery of the report that advanced the task: cast the current step again. */
  | { readonly kind: 'recast' }
  | { readonly kind: 'apply'; readonly transition: Transition }
  /** A destination failed and alternates are left: claim them (the flow), then {@link afterAlternates}. */
  | { readonly kind: 'alternates'; readonly context: StepContext; readonly needed: AlternatesNeeded };

const HANDLERS: Readonly<Record<string, StepHandler>> = { ...LIFECYCLE_STEPS, ...RESIZE_STEPS, ...LIVE_MIGRATION_STEPS, ...EVACUATE_STEPS };

/**
 * Whether a failed report says the host never did the step (the watchdog's verdict on a silent or
 * gone host, a cast the broker refused, a host no compute process serves), as opposed to its compute
 * trying and failing. Pure.
 */
export function hostUnreachable(r: StepReport): boolean {
  return r.failure !== undefined && (r.origin !== 'compute' || r.failure.code === FAILURE_CODES.compute.hostNotServed);
}

/** Why a step failed, as events and faults say it. Pure. */
export function failureReason(r: StepReport): string {
  return r.failure?.message ?? `${r.step} failed on ${r.host}`;
}

/**
 * The hosts a stale report left a guest on that the instance does not live on (its host, its
 * current step's host, its migration's hosts while the migration is not over): only a success of a
 * guest-creating step does. Pure.
 */
export function strayGuestHosts(snap: ActionSnapshot, r: StepReport): string[] {
  if (r.failure !== undefined || !GUEST_CREATING_STEPS.has(r.step)) return [];
  const m = snap.migration;
  const live = new Set([
    snap.instance.host,
    snap.task?.stepHost,
    ...(m !== undefined && !MIGRATION_FINAL.has(m.status) ? [m.sourceCompute, m.destCompute] : []),
  ]);
  return live.has(r.host) ? [] : [r.host];
}

/** Judges a step report against the locked row (undefined: the instance is gone). Pure. */
export function judgeStepReport(snap: ActionSnapshot | undefined, r: StepReport): StepVerdict {
  if (snap === undefined) return { kind: 'orphan' };
  const { task } = snap;
  if (task === undefined || task.requestId !== r.requestId)
    return { kind: 'ignore', reason: task === undefined ? 'no_task' : 'stale', terminate: strayGuestHosts(snap, r) };
  const current = task.step === r.step && task.stepHost === r.host && task.attempt === r.attempt;
  if (!current) {
    if (task.enteredBy === stepKey(r.step, r.host, r.attempt, r.failure !== undefined)) return { kind: 'recast' };
    return { kind: 'ignore', reason: 'stale', terminate: strayGuestHosts(snap, r) };
  }
  const handler = HANDLERS[task.step];
  const context: StepContext = { instance: snap.instance, task, migration: snap.migration };
  if (handler === undefined) return { kind: 'apply', transition: moveFailed(context, `unknown step ${task.step}`) };
  const outcome = r.failure === undefined ? handler.ok(context) : handler.fail(context, failureReason(r), hostUnreachable(r));
  return 'kind' in outcome && outcome.kind === 'alternates'
    ? { kind: 'alternates', context, needed: outcome }
    : { kind: 'apply', transition: outcome as Transition };
}

/**
 * After the alternates were claimed in order: the same step on the first one claimed (the next
 * attempt, the alternates after it kept), or, none claimed, the action fails (a move reverted to its
 * source, an unshelve back to SHELVED_OFFLOADED holding nothing) with Nova's MaxRetriesExceeded. Pure.
 */
export function afterAlternates(c: StepContext, needed: AlternatesNeeded, d: RescheduleDecision): Transition {
  const skipped = d.skipped.map((s) => `${s.host}: ${s.reason}`);
  if (d.kind === 'exhausted') {
    return needed.claim === 'move'
      ? moveFailed(c, needed.reason, { fault: exhaustedFault(c, needed.reason, skipped) })
      : unshelveFailed(c, needed.reason, skipped);
  }
  const s = d.selection;
  const details = `${needed.reason}; retried on host ${s.serviceHost}${skipped.length === 0 ? '' : ` (alternates dropped: ${skipped.join('; ')})`}`;
  return {
    ...(needed.claim === 'move'
      ? { migration: { destCompute: s.serviceHost, destNode: s.nodename } }
      : { instance: { host: s.serviceHost, node: s.nodename } }),
    events: [stepEvent(c, false, details)],
    task: { kind: 'advance', next: { step: c.task.step, host: s.serviceHost, attempt: c.task.attempt + 1, hostList: d.remaining } },
  };
}
