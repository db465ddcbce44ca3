import { recordServerTaskIntent, toWireFlavor, type CellMapping } from '@cellsched/api-db';
import { activeTraceParent } from '@cellsched/bus';
import { ServerActionRequest } from '@cellsched/wire';
import { ApiError, badRequest } from '../domain/errors';
import { checkActionState, checkHostBeforeState, invalidState, taskStateOf, type ParsedServerAction } from '../domain/server-action';
import type { PendingAction, ServerRecord } from '../domain/server-record';
import type { ApiRequest, ApiDeps } from './http/kit';
import { checkAfterState, checkBeforeState, type CheckedAction } from './server-action-checks';
import { locateServer } from './server-reader';

/** An accepted action: the server as the caller now sees it (its task_state overlaid) and what was cast. */
export interface AcceptedAction {
  readonly server: ServerRecord;
  readonly cast: ServerActionRequest;
}

const RESIZE_ACTIONS: readonly string[] = ['confirmResize', 'revertResize'];

/**
 * Nova's answer when a confirm or revert is already under way: its migration is no longer
 * `finished` in Nova (here it still is, in the cell, until the super-conductor applies it).
 */
function pendingConflict(p: ParsedServerAction, uuid: string, pending: PendingAction): Error {
  if (RESIZE_ACTIONS.includes(p.action) && RESIZE_ACTIONS.includes(pending.action)) return badRequest('Instance has not been resized.');
  return invalidState(p.verb, uuid, 'task_state', pending.taskState);
}

/** The wire request the super-conductor gets (and the sweeper re-casts as it was recorded). */
function castOf(p: ParsedServerAction, req: ApiRequest, r: ServerRecord, cell: CellMapping, checked: CheckedAction): ServerActionRequest {
  return ServerActionRequest.fromPartial({
    instanceUuid: r.uuid,
    cellUuid: cell.uuid,
    action: p.action,
    requestId: req.requestId,
    userId: req.caller.userId,
    projectId: r.projectId,
    taskState: taskStateOf(p) ?? '',
    rebootType: p.rebootType ?? '',
    flavor: checked.flavor === undefined ? undefined : toWireFlavor(checked.flavor),
    host: p.host ?? '',
    imageRef: p.imageRef ?? '',
    blockMigration: p.blockMigration ?? '',
    availabilityZone: p.availabilityZone ?? '',
    displayName: p.name ?? '',
    force: p.force === true,
  });
}

/** Casts `server_action`; an unconfirmed cast is retried in the background (and by the sweeper, from its intent). */
async function cast(deps: ApiDeps, req: ServerActionRequest): Promise<void> {
  const log = { instance_uuid: req.instanceUuid, request_id: req.requestId, action: req.action };
  try {
    await deps.conductor.serverAction(req, { timeoutMs: deps.castTimeoutMs });
    deps.log.info(log, 'server_action cast');
  } catch (err) {
    deps.log.warn({ ...log, err }, 'server_action not confirmed; retrying in the background');
    deps.retrier.retry({ ...log, rpc_method: 'server_action' }, () => deps.conductor.serverAction(req, { timeoutMs: deps.castTimeoutMs }));
  }
}

/**
 * `POST /servers/{id}/action` for an action of issue 13, after its body was parsed: finds the
 * server (404), judges it as Nova's controller and compute API do (the server's state as read
 * from its cell with any pending action overlaid, then the checks that need a database; 409 /
 * 400 with Nova's messages), records the action's intent in the API DB (409 when another action
 * got there first) and casts `server_action` to the super-conductor. The API never writes a
 * cell DB: the super-conductor applies the task_state there, with a guard, and clears the
 * intent. A repeat of the same request id is the same intent (idempotent).
 */
export async function acceptServerAction(deps: ApiDeps, req: ApiRequest, p: ParsedServerAction): Promise<AcceptedAction> {
  const { record, mapping, pending } = await locateServer(deps, req.params.id ?? '', req.caller);
  if (record.vmState === 'unknown') throw new ApiError(503, `The cell of instance ${record.uuid} did not answer; try again later.`);
  const cell = mapping.cell;
  checkHostBeforeState(p, record);
  if (cell === undefined) {
    // NOTE: still a BuildRequest (vm_state building): no action allows it.
    checkActionState(p, record);
    throw invalidState(p.verb, record.uuid, 'vm_state', record.vmState);
  }
  await checkBeforeState(deps, cell, p, record);
  checkActionState(p, record);
  // NOTE: a pending confirm/revert (no task_state to overlay) has, in Nova, already moved the migration on from `finished`.
  if (pending !== undefined && pending.taskState === null && RESIZE_ACTIONS.includes(pending.action))
    throw pendingConflict(p, record.uuid, pending);
  const checked = await checkAfterState(deps, cell, p, record, req.caller);
  const request = castOf(p, req, record, cell, checked);
  const recorded = await recordServerTaskIntent(deps.apiDb, {
    instanceUuid: record.uuid,
    action: p.action,
    taskState: taskStateOf(p),
    requestId: req.requestId,
    request: ServerActionRequest.toJSON(request),
    traceParent: activeTraceParent() ?? null,
  });
  if (!recorded.recorded) {
    const e = recorded.existing;
    throw pendingConflict(p, record.uuid, { action: e.action, taskState: e.taskState });
  }
  await cast(deps, request);
  return { server: { ...record, taskState: taskStateOf(p) ?? record.taskState }, cast: request };
}
