/**
 * The casts of the action state machines (InstanceStep to `compute.<host>`), and the reports that
 * stand in for a compute's result when there is none: a cast the broker refused, a step the
 * watchdog gave up on. Both are that step's failure on that host, exactly like the build's.
 */
import type { OverdueInstanceTask } from '@cellsched/cell-db';
import { FAILURE_CODES, makeFailure, type InstanceStepRequest } from '@cellsched/wire';
import { STEP } from './steps';
import type { ActionInstance, ActionTask, MigrationView, StepReport } from './types';

/** A step decided and committed, to cast to `compute.<host>`. */
export interface StepCast {
  readonly instanceUuid: string;
  readonly host: string;
  readonly request: InstanceStepRequest;
}

/** Steps that run on a move's destination (their peer is the source); the others' peer is the destination. */
const DESTINATION_STEPS: ReadonlySet<string> = new Set([
  STEP.prepResize,
  STEP.finishResize,
  STEP.revertResize,
  STEP.preLiveMigration,
  STEP.rollbackLiveMigration,
  STEP.rebuildEvacuated,
]);

/** The flavor the guest has once the step is done. Pure. */
export function stepFlavor(i: ActionInstance, step: string): ActionInstance['flavor'] {
  if (step === STEP.prepResize || step === STEP.finishResize) return i.newFlavor ?? i.flavor;
  if (step === STEP.revertResize || step === STEP.finishRevertResize) return i.oldFlavor ?? i.flavor;
  return i.flavor;
}

/** The other host of a move for this step ('' when there is none). Pure. */
export function peerHost(step: string, m: MigrationView | undefined): string {
  if (m === undefined) return '';
  return (DESTINATION_STEPS.has(step) ? m.sourceCompute : m.destCompute) ?? '';
}

/** The cast of the task's current step (the instance as it is after the decision). Pure. */
export function stepCastFor(
  i: ActionInstance,
  task: Pick<ActionTask, 'step' | 'stepHost' | 'attempt' | 'requestId' | 'migrationUuid' | 'params'>,
  m: MigrationView | undefined,
): StepCast {
  return {
    instanceUuid: i.uuid,
    host: task.stepHost,
    request: {
      instance: i.wire,
      step: task.step,
      migrationUuid: task.migrationUuid ?? '',
      attempt: task.attempt,
      requestId: task.requestId,
      flavor: stepFlavor(i, task.step),
      imageRef: task.params.image_ref ?? i.imageRef ?? '',
      peerHost: peerHost(task.step, m),
      blockMigration: task.params.block_migration ?? '',
    },
  };
}

/** A step cast the broker refused (no queue bound to `compute.<host>`): that step failed on that host. Pure. */
export function refusedStepReport(cast: StepCast): StepReport {
  const { request: q, host } = cast;
  return {
    instanceUuid: cast.instanceUuid,
    host,
    step: q.step,
    migrationUuid: q.migrationUuid,
    attempt: q.attempt,
    requestId: q.requestId,
    origin: 'unroutable',
    failure: makeFailure(
      FAILURE_CODES.cellConductor.stepUnroutable,
      `the broker refused the ${q.step} cast to compute.${host}: no compute serves host ${host}`,
      { retryable: true, expected: true },
    ),
  };
}

/** A step the watchdog found overdue (read, not locked: the flow re-judges it under the lock). */
export type OverdueStep = Pick<OverdueInstanceTask, 'instanceUuid' | 'requestId' | 'step' | 'stepHost' | 'attempt' | 'hostGone'>;

/** The watchdog's verdict on an overdue step, as that step's failure on its host. Pure. */
export function overdueStepReport(o: OverdueStep, migrationUuid: string): StepReport {
  const failure = o.hostGone
    ? makeFailure(FAILURE_CODES.cellConductor.stepHostGone, `host ${o.stepHost} is gone (its compute service was deleted or forced down)`, {
        retryable: true,
        expected: true,
      })
    : makeFailure(FAILURE_CODES.cellConductor.stepTimedOut, `no ${o.step} result from host ${o.stepHost} by the step deadline`, {
        retryable: true,
        expected: true,
      });
  return {
    instanceUuid: o.instanceUuid,
    host: o.stepHost,
    step: o.step,
    migrationUuid,
    attempt: o.attempt,
    requestId: o.requestId,
    failure,
    origin: 'watchdog',
  };
}
