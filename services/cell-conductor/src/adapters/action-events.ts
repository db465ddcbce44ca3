import {
  EVENT_COMPUTE_BUILD,
  EVENT_ERROR,
  EVENT_SUCCESS,
  finishActionEvent,
  listInstanceActions,
  startActionAndFinishEvent,
  startInstanceAction,
  type Queryable,
} from '@cellsched/cell-db';
import type { BuildEvent, InstanceSnapshot } from '../ports';

/** Our event for the cell conductor's in-cell retry (details: from which host to which). */
export const EVENT_RESCHEDULE = 'conductor_reschedule_build';

/** The instance-action event names of the domain's events (Nova's name for the compute's build). */
const EVENT_NAMES: Readonly<Record<BuildEvent, string>> = { compute_build: EVENT_COMPUTE_BUILD, reschedule: EVENT_RESCHEDULE };

/**
 * Records a finished event of the instance's create action (created if the super-conductor's
 * start is missing). Idempotent per (action, event, host). No request id: nothing recorded.
 */
export async function recordEvent(
  db: Queryable,
  inst: Pick<InstanceSnapshot, 'uuid' | 'userId' | 'projectId'>,
  requestId: string,
  event: BuildEvent,
  host: string | null,
  outcome: { readonly ok: boolean; readonly details?: string },
): Promise<void> {
  if (requestId === '') return;
  const action = { instanceUuid: inst.uuid, requestId, action: 'create', userId: inst.userId, projectId: inst.projectId };
  const result = {
    result: outcome.ok ? EVENT_SUCCESS : EVENT_ERROR,
    ...(outcome.details === undefined ? {} : { details: outcome.details }),
  } as const;
  if (await startActionAndFinishEvent(db, action, { event: EVENT_NAMES[event], host }, result)) return;
  // NOTE: a concurrent first start of the action was not visible to that statement: the two statements see it
  await startInstanceAction(db, action);
  await finishActionEvent(db, { instanceUuid: inst.uuid, requestId, event: EVENT_NAMES[event], host }, result);
}

/** The request id of the instance's create action ('' when none). Read-only. */
export async function createRequestId(db: Queryable, instanceUuid: string): Promise<string> {
  return (await listInstanceActions(db, instanceUuid)).find((a) => a.action === 'create')?.requestId ?? '';
}
