import {
  deleteBuildRequest,
  deleteInstanceMapping,
  deleteRequestSpec,
  getInstanceMapping,
  removeInstanceGroupMember,
  setInstanceMappingQueuedForDelete,
} from '@cellsched/api-db';
import { withTransaction } from '@cellsched/db';
import type { Caller } from '../domain/auth';
import { notFound } from '../domain/errors';
import type { ApiDeps } from './http/kit';

const instanceNotFound = (uuid: string): Error => notFound(`Instance ${uuid} could not be found.`);

/**
 * `DELETE /servers/{id}` (Nova's compute_api._delete, cells v2 part):
 * - still a BuildRequest: delete it, its RequestSpec, group membership and mapping in one
 *   transaction. Whoever deletes the BuildRequest first wins: if the super-conductor got
 *   `false` from its own delete it releases the claim and cleans up (delete during build).
 * - in a cell: mark the mapping `queued_for_delete` (the durable intent), then cast
 *   `delete_instance` to the super-conductor (the API never writes a cell DB). An
 *   unconfirmed cast is retried in-process, and the sweeper re-casts queued deletes.
 * Idempotent per server; a second delete of a server already queued re-casts (harmless).
 */
export async function deleteServer(deps: ApiDeps, uuid: string, caller: Caller, requestId: string): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(uuid)) throw instanceNotFound(uuid);
  for (let attempt = 0; attempt < 3; attempt++) {
    const mapping = await getInstanceMapping(deps.apiDb, uuid);
    if (mapping === undefined || (!caller.isAdmin && mapping.projectId !== caller.projectId)) throw instanceNotFound(uuid);
    if (mapping.cell === undefined) {
      const deleted = await withTransaction(deps.apiDb, async (c) => {
        if (!(await deleteBuildRequest(c, uuid))) return false;
        await deleteRequestSpec(c, uuid);
        await removeInstanceGroupMember(c, uuid);
        await deleteInstanceMapping(c, uuid);
        return true;
      });
      if (deleted) return;
      continue; // NOTE: the super-conductor just put it in a cell: delete it there.
    }
    await setInstanceMappingQueuedForDelete(deps.apiDb, uuid, true);
    const req = { instanceUuid: uuid, cellUuid: mapping.cell.uuid, requestId, userId: caller.userId, projectId: mapping.projectId };
    try {
      await deps.conductor.deleteInstance(req, { timeoutMs: deps.castTimeoutMs });
    } catch (err) {
      deps.log.warn({ err, instance_uuid: uuid, request_id: requestId }, 'delete cast not confirmed; retrying in the background');
      deps.retrier.retry({ instance_uuid: uuid, rpc_method: 'delete_instance' }, () =>
        deps.conductor.deleteInstance(req, { timeoutMs: deps.castTimeoutMs }),
      );
    }
    return;
  }
  throw instanceNotFound(uuid);
}
