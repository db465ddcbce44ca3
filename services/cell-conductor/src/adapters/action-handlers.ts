import { activeTraceParent, withSavedTrace, type CastContext } from '@cellsched/bus';
import type { InstanceActionRequest, InstanceStepResultRequest } from '@cellsched/wire';
import { onInstanceAction, onStepReport } from '../domain/action-flow';
import type { ActionRequest, StepReport } from '../domain/actions/types';
import type { ActionPorts } from '../ports';

/** The domain's request of an `instance_action` cast. Pure. */
export function actionRequestOf(req: InstanceActionRequest): ActionRequest {
  return {
    instanceUuid: req.instanceUuid,
    action: req.action,
    requestId: req.requestId,
    rebootType: req.rebootType,
    imageRef: req.imageRef,
    displayName: req.displayName,
    migrationUuid: req.migrationUuid,
    hostList: req.hostList,
    newFlavor: req.newFlavor,
    requestSpec: req.requestSpec,
    userId: req.userId,
    projectId: req.projectId,
    blockMigration: req.blockMigration,
  };
}

/** The domain's report of an `instance_step_result` cast (attempt 0, from an older sender, is the first). Pure. */
export function stepReportOf(req: InstanceStepResultRequest): StepReport {
  return {
    instanceUuid: req.instanceUuid,
    host: req.host,
    step: req.step,
    migrationUuid: req.migrationUuid,
    attempt: req.attempt >= 1 ? req.attempt : 1,
    requestId: req.requestId,
    failure: req.failure,
    origin: 'compute',
  };
}

/**
 * `instance_action` (CellConductorService 1.2, block_migration 1.3; from the super-conductor): take the action in one
 * transaction holding the instance row (its first step recorded with a deadline), then cast that
 * step to `compute.<host>`; or refuse it with the instance's state put back. Idempotent per
 * (instance, request id): a redelivery re-sends the first step or changes nothing.
 */
export function instanceActionHandler(ports: ActionPorts) {
  return async (req: InstanceActionRequest, ctx: CastContext): Promise<void> => {
    if (!UUID.test(req.instanceUuid) || req.requestId === '') {
      ctx.logger.warn(
        { instance_uuid: req.instanceUuid, action: req.action, request_id: req.requestId },
        'instance action without a valid instance uuid or request id dropped',
      );
      return;
    }
    await onInstanceAction(ports, ctx.logger, actionRequestOf(req), activeTraceParent() ?? null);
  };
}

/**
 * `instance_step_result` (from a compute): move the action on by one step (guarded by request id,
 * step, host and attempt: a late or repeated result changes nothing), claiming the next alternate
 * when a destination failed, then cast the next step. An evacuation's `destroy_evacuated` ends its
 * migration. A result for a deleted instance cleans its move up.
 */
export function instanceStepResultHandler(ports: ActionPorts) {
  return async (req: InstanceStepResultRequest, ctx: CastContext): Promise<void> => {
    // NOTE: a result naming no instance can neither move an action on nor clean one up: dropped, not dead-lettered ten times
    if (!UUID.test(req.instanceUuid)) {
      ctx.logger.warn(
        { instance_uuid: req.instanceUuid, step: req.step, host: req.host },
        'instance step result without a valid instance uuid dropped',
      );
      return;
    }
    await onStepReport(ports, ctx.logger, stepReportOf(req));
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs a periodic pass's resumed work in the trace the action saved (the watchdog's verdict joins the move's trace). */
export const inSavedTrace = <T>(name: string, traceParent: string | null, fn: () => Promise<T>): Promise<T> =>
  withSavedTrace(name, traceParent, fn);
