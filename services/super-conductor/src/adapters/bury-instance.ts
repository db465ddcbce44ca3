import { deleteBuildRequest, getBuildRequest, setInstanceMappingCell } from '@cellsched/api-db';
import { addInstanceFault, createInstance, destroyInstance, EVENT_ERROR, finishActionEvent, startInstanceAction } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { RequestSpec } from '@cellsched/wire';
import { EVENT_SCHEDULE } from '../domain/build-plan';
import { forgetServer, instanceFrom, type BuildDeps } from './build-deps';

/** Why an instance is buried: the fault shown as the server's `fault`. */
export interface BurialFault {
  readonly message: string;
  readonly details: string;
}

/**
 * Buries an instance that could not be scheduled (Nova's `_bury_in_cell0`): in one cell0
 * transaction the instance in ERROR, its fault (only when the row is new, so a redelivery
 * adds no second fault) and the create action's schedule event in Error; then the mapping
 * points at cell0 and the build request goes. Build request already gone: the user deleted
 * the server, so nothing is left behind. Idempotent.
 */
export async function buryInCell0(
  deps: BuildDeps,
  instanceUuid: string,
  spec: RequestSpec,
  fault: BurialFault,
  requestId: string,
): Promise<'buried' | 'deleted'> {
  const br = await getBuildRequest(deps.apiDb, instanceUuid);
  const cell0 = deps.cells.cell0;
  if (br === undefined) {
    await destroyInstance(cell0.pool, instanceUuid);
    await forgetServer(deps, instanceUuid);
    return 'deleted';
  }
  await withTransaction(cell0.pool, async (c) => {
    const { created } = await createInstance(c, { ...instanceFrom(br, spec), vmState: 'error', taskState: null });
    if (!created) return;
    await addInstanceFault(c, { instanceUuid, code: 500, message: fault.message, details: fault.details });
    await startInstanceAction(c, {
      instanceUuid,
      requestId,
      action: 'create',
      userId: br.instance.userId || null,
      projectId: br.projectId,
    });
    await finishActionEvent(
      c,
      { instanceUuid, requestId, event: EVENT_SCHEDULE, host: null },
      { result: EVENT_ERROR, details: fault.message },
    );
  });
  await setInstanceMappingCell(deps.apiDb, instanceUuid, await deps.cells.mappingId(cell0.uuid));
  if (!(await deleteBuildRequest(deps.apiDb, instanceUuid))) {
    await destroyInstance(cell0.pool, instanceUuid);
    await forgetServer(deps, instanceUuid);
    return 'deleted';
  }
  return 'buried';
}
