import type { CastContext } from '@cellsched/bus';
import { addInstanceFault, updateInstance } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { BuildAbortedRequest, BuildSucceededRequest } from '@cellsched/wire';
import { EVENT_COMPUTE_BUILD, recordEvent } from './action-events';
import { lockInstance, normalizeAttempt } from './instance-lock';
import { castTerminate, type BuildDeps } from './reschedule-handler';

type Verdict = 'applied' | 'repeat' | 'stale';

/**
 * `build_succeeded`: the instance goes ACTIVE on the reporting host (task none, node,
 * launched_at, retry state cleared) only if it is still building there in the reported
 * attempt. A repeat (redelivered build or cast) changes nothing. A stale report (the
 * instance was deleted, rescheduled by the watchdog, or is owned by another host) makes the
 * conductor cast `terminate_instance` to that compute, so the guest runs on one host only.
 */
export function buildSucceededHandler(deps: BuildDeps) {
  return async (req: BuildSucceededRequest, ctx: CastContext): Promise<void> => {
    const attempt = normalizeAttempt(req.attempt);
    const verdict = await withTransaction(deps.pool, async (c): Promise<Verdict> => {
      const inst = await lockInstance(c, req.instanceUuid);
      if (inst === undefined) return 'stale';
      if (inst.host !== req.host || inst.buildAttempt !== attempt) return 'stale';
      if (inst.vmState !== 'building') return inst.vmState === 'active' ? 'repeat' : 'stale';
      await updateInstance(c, inst.uuid, {
        vmState: 'active', taskState: null, powerState: 1, node: req.node === '' ? inst.node : req.node, launchedAt: new Date(),
        buildHostList: [], buildDeadlineAt: null,
      }, { expectedVmState: ['building'] });
      await recordEvent(c, inst, req.requestId, EVENT_COMPUTE_BUILD, req.host, { ok: true });
      return 'applied';
    });
    ctx.logger.info({ instance_uuid: req.instanceUuid, host: req.host, attempt, verdict }, 'build succeeded');
    if (verdict === 'stale') {
      await castTerminate(deps, req.host, { instanceUuid: req.instanceUuid, attempt, reason: 'instance not building on this host' }, ctx.logger);
    }
  };
}

/**
 * `build_aborted` (a non-reschedulable failure): release the claim, then ERROR with the
 * compute's failure as the fault, in the transaction holding the row. Only for the
 * building attempt on the reporting host; anything else is a repeat or stale and changes
 * nothing (the release is idempotent, the fault is written with the guarded update).
 */
export function buildAbortedHandler(deps: BuildDeps) {
  return async (req: BuildAbortedRequest, ctx: CastContext): Promise<void> => {
    const attempt = normalizeAttempt(req.attempt);
    const applied = await withTransaction(deps.pool, async (c) => {
      const inst = await lockInstance(c, req.instanceUuid);
      if (inst === undefined || inst.vmState !== 'building' || inst.host !== req.host || inst.buildAttempt !== attempt) return false;
      await deps.claimer.release(inst.uuid);
      await updateInstance(c, inst.uuid, { vmState: 'error', taskState: null, buildHostList: [], buildDeadlineAt: null }, { expectedVmState: ['building'] });
      const message = req.failure?.message ?? 'Build of instance aborted';
      await addInstanceFault(c, { instanceUuid: inst.uuid, code: 500, message, host: req.host, details: req.failure?.code ?? null });
      await recordEvent(c, inst, req.requestId, EVENT_COMPUTE_BUILD, req.host, { ok: false, details: message });
      return true;
    });
    ctx.logger.info({ instance_uuid: req.instanceUuid, host: req.host, attempt, applied }, 'build aborted');
  };
}
