import { EVENT_ERROR, EVENT_SUCCESS, finishActionEvent, startInstanceAction, type InstanceRecord, type Queryable } from '@cellsched/cell-db';

export { EVENT_COMPUTE_BUILD } from '@cellsched/cell-db';
/** Our event for the cell conductor's in-cell retry (details: from which host to which). */
export const EVENT_RESCHEDULE = 'conductor_reschedule_build';

/**
 * Records a finished event of the instance's create action (created if the super-conductor's
 * start is missing). Idempotent per (action, event, host). No request id: nothing recorded.
 */
export async function recordEvent(db: Queryable, inst: InstanceRecord, requestId: string, event: string, host: string | null,
  outcome: { ok: boolean; details?: string }): Promise<void> {
  if (requestId === '') return;
  await startInstanceAction(db, { instanceUuid: inst.uuid, requestId, action: 'create', userId: inst.userId, projectId: inst.projectId });
  await finishActionEvent(db, { instanceUuid: inst.uuid, requestId, event, host },
    { result: outcome.ok ? EVENT_SUCCESS : EVENT_ERROR, ...(outcome.details === undefined ? {} : { details: outcome.details }) });
}
