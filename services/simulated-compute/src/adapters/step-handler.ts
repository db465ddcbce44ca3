import type { CastContext } from '@cellsched/bus';
import { makeFailure } from '@cellsched/grpc';
import { FAILURE_CODES, type Failure, type InstanceStepRequest } from '@cellsched/wire';
import { decideStepOutcome, stepHangs } from '../domain/fault-plan';
import { applyGuestEffect, guestEffectOf } from '../domain/guest-steps';
import { conductorUnreachable, hostOf, type ComputeDeps } from './build-handler';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Casts the step's result to the cell conductor (success without `failure`). */
async function reportStep(deps: ComputeDeps, host: string, req: InstanceStepRequest, failure: Failure | undefined): Promise<void> {
  await deps.conductor
    .cast('instanceStepResult', {
      instanceUuid: req.instance?.uuid ?? '',
      host,
      step: req.step,
      migrationUuid: req.migrationUuid,
      attempt: req.attempt,
      requestId: req.requestId,
      failure,
    })
    .catch(conductorUnreachable);
}

/**
 * `instance_step` (ComputeService 1.2; block_migration 1.3) on the host the cast was sent to: draw
 * the step's fate from the fault plan (fail / hang / crash, per step and host, see fault-plan.ts),
 * wait the step latency, do the step to the host's guest (a live migration's destination guest
 * notes its block_migration; every step logs it), then cast `instance_step_result` to the cell
 * conductor. Idempotent: every step's effect is a state, so a redelivered step does nothing new
 * and reports again. Acked only after the result is confirmed.
 */
export function instanceStepHandler(deps: ComputeDeps) {
  return async (req: InstanceStepRequest, ctx: CastContext): Promise<void> => {
    const host = hostOf(ctx);
    const uuid = req.instance?.uuid ?? '';
    const effect = guestEffectOf(req.step);
    const fields = {
      instance_uuid: uuid,
      host,
      step: req.step,
      attempt: req.attempt,
      migration_uuid: req.migrationUuid || undefined,
      block_migration: req.blockMigration || undefined,
    };
    if (effect === undefined) {
      ctx.logger.warn(fields, 'unknown instance step: reported as failed');
      return reportStep(deps, host, req, makeFailure(FAILURE_CODES.compute.stepFailed, `unknown step ${req.step}`, { expected: true }));
    }
    const outcome = decideStepOutcome(deps.faults(), req.step, host, deps.random());
    if (stepHangs(deps.faults(), req.step, host)) await deps.stepReleased(req.step, host);
    await sleep(outcome === 'crash' ? deps.stepLatencyMs / 2 : deps.stepLatencyMs);
    if (outcome === 'crash') deps.crash();
    ctx.logger.info({ ...fields, outcome }, 'instance step finished');
    if (outcome === 'fail') {
      return reportStep(
        deps,
        host,
        req,
        makeFailure(FAILURE_CODES.compute.stepFailed, `${req.step} of instance ${uuid} failed on host ${host}: simulated failure`, {
          retryable: true,
          expected: true,
        }),
      );
    }
    applyGuestEffect(deps.guests, host, uuid, effect, req.blockMigration);
    return reportStep(deps, host, req, undefined);
  };
}

/**
 * `instance_step` for a host this process no longer simulates (nor any other): the step failed on
 * that host (`compute.host.not_served`), so the conductor moves the action on at once.
 */
export function notServedStepHandler(deps: ComputeDeps) {
  return async (req: InstanceStepRequest, ctx: CastContext): Promise<void> => {
    const host = hostOf(ctx);
    ctx.logger.warn(
      { instance_uuid: req.instance?.uuid, host, step: req.step },
      'instance step for a host nobody serves: reported as its failure',
    );
    await reportStep(
      deps,
      host,
      req,
      makeFailure(FAILURE_CODES.compute.hostNotServed, `host ${host} is not served by any compute process (it was removed)`, {
        retryable: true,
        expected: true,
      }),
    );
  };
}
