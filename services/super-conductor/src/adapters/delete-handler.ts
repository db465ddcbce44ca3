import type { CastContext } from '@cellsched/bus';
import {
  findMigrations,
  finishInstanceAction,
  getInstance,
  InstanceActionName,
  MIGRATION_FINAL_STATUSES,
  softDeleteInstance,
  startInstanceAction,
  updateMigration,
  type InstanceRecord,
  type MigrationRecord,
} from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { DeleteInstanceRequest } from '@cellsched/wire';
import { forgetServer, type BuildDeps } from './build-deps';
import { cellCaster } from './cell-ports';

/**
 * `delete_instance` (api 1.1; Nova's compute_api._delete for a server in a cell): in one cell
 * transaction holding the instance row (the cell conductor's build handlers take the same
 * lock, so a reschedule in flight finishes first and never claims afterwards), soft-delete
 * the instance, record the `delete` action and end its moves in progress (`error`); then release
 * its allocation and its migrations' and cast `terminate_instance` to its host and to the other
 * host of each such move (issue 13: nothing of a move is left on either host); last, forget the server at the API level (mapping,
 * request spec, group membership), so nothing of it is left but the soft-deleted cell row
 * and its actions (Nova keeps the mapping until `archive_deleted_rows`; here the queued
 * mapping is the sweeper's to-do list, and is done once this handler finished). A crash
 * before the end is a redelivery (the ack follows). Idempotent: a deleted or unknown
 * instance only gets its (idempotent) release and forget again.
 */
export function deleteInstanceHandler(deps: BuildDeps) {
  return async (req: DeleteInstanceRequest, ctx: CastContext): Promise<void> => {
    const cell = deps.cells.cell(req.cellUuid);
    const { inst, moves } = await withTransaction(
      cell.pool,
      async (c): Promise<{ inst: InstanceRecord | undefined; moves: MigrationRecord[] }> => {
        const locked = await c.query('SELECT 1 FROM instances WHERE uuid = $1 AND deleted_at IS NULL FOR UPDATE', [req.instanceUuid]);
        if (locked.rowCount === 0) return { inst: undefined, moves: [] };
        const found = await getInstance(c, req.instanceUuid);
        await softDeleteInstance(c, req.instanceUuid);
        if (req.requestId !== '') {
          await startInstanceAction(c, {
            instanceUuid: req.instanceUuid,
            requestId: req.requestId,
            action: InstanceActionName.DELETE,
            userId: req.userId || null,
            projectId: req.projectId || null,
          });
          await finishInstanceAction(c, req.instanceUuid, req.requestId);
        }
        // NOTE: a move in progress (or waiting in VERIFY_RESIZE, or an evacuation `done`) ends with the instance: its consumer and its other host's guest go too
        const inProgress = (await findMigrations(c, { instanceUuids: [req.instanceUuid] })).filter(
          (m) => !MIGRATION_FINAL_STATUSES.includes(m.status),
        );
        for (const m of inProgress) await updateMigration(c, m.uuid, { status: 'error' }, [m.status]);
        return { inst: found, moves: inProgress };
      },
    );
    await deps.claims.release([req.instanceUuid, ...moves.map((m) => m.uuid)]);
    const hosts = new Set(
      [inst?.host, ...moves.flatMap((m) => [m.sourceCompute, m.destCompute])].filter((h): h is string => h != null && h !== ''),
    );
    if (inst !== undefined && cell.compute !== undefined) {
      // NOTE: a terminate the broker refuses is done: no compute serves that host, so no guest runs there
      for (const host of hosts)
        await cellCaster(cell).terminateInstance(host, {
          instanceUuid: inst.uuid,
          attempt: inst.buildAttempt,
          reason: 'deleted by the user',
        });
    }
    await forgetServer(deps, req.instanceUuid);
    ctx.logger.info({ instance_uuid: req.instanceUuid, target_cell: cell.name, was_live: inst !== undefined }, 'instance deleted');
  };
}
