/**
 * What moves actions on without a message (issue 13): the step watchdog (a step with no result by
 * its deadline, or on a host that is gone, failed), the evacuation cleanup when a source is heard
 * from again, Nova's resize auto-confirm, and the sweep of migrations whose instance was deleted.
 */
import type { ActionPorts, BuildLog } from '../ports';
import { castAfterCommit, onInstanceAction, onStepReport } from './action-flow';
import { evacuationCleanupCast, orphanCleanup } from './actions/cleanup';
import { overdueStepReport } from './actions/step-cast';
import { ACTION } from './actions/steps';
import type { ActionRequest } from './actions/types';

/** Runs `fn` in the trace saved with the work it resumes (the adapter's; a no-op in tests). */
export type InTrace = <T>(name: string, traceParent: string | null, fn: () => Promise<T>) => Promise<T>;

const noTrace: InTrace = (_name, _tp, fn) => fn();

/**
 * The step watchdog: each overdue step is that step's failure on its host (re-judged under the row
 * lock: a result that got there first wins), so the action moves on (next alternate, rollback,
 * or its end with a fault) and no action ever waits for good. Returns how many it failed.
 */
export async function runStepWatchdog(
  ports: ActionPorts,
  log: BuildLog,
  o: { readonly serviceDownTimeMs: number; readonly limit?: number },
  inTrace: InTrace = noTrace,
): Promise<number> {
  const overdue = await ports.actions.overdueTasks({ serviceDownTimeMs: o.serviceDownTimeMs, limit: o.limit ?? 100 });
  for (const t of overdue) {
    log.warn(
      { instance_uuid: t.instanceUuid, step: t.step, host: t.stepHost, attempt: t.attempt, host_gone: t.hostGone },
      'step watchdog: step overdue',
    );
    await inTrace('step watchdog', t.traceParent, () => onStepReport(ports, log, overdueStepReport(t, t.migrationUuid)));
  }
  return overdue.length;
}

/**
 * Hosts heard from (a heartbeat or a report): each evacuation `done` from one of them gets
 * destroy_evacuated cast to its source; the result ends it (action-flow). Repeated at every
 * heartbeat until it is done; a cast nobody takes now waits for the next. Returns the casts sent.
 */
export async function onHostsHeardFrom(ports: ActionPorts, log: BuildLog, hosts: readonly string[]): Promise<number> {
  let sent = 0;
  for (const { migration, instance } of await ports.actions.evacuationsAwaitingSource(hosts)) {
    const cast = evacuationCleanupCast(migration, instance);
    if (cast === undefined) continue;
    const r = await ports.compute.instanceStep(cast.host, cast.request);
    if (r === 'sent') sent++;
    log.info(
      { instance_uuid: cast.instanceUuid, migration_uuid: migration.uuid, host: cast.host, routed: r === 'sent' },
      'evacuated instance: destroying its copy on the source',
    );
  }
  return sent;
}

/**
 * Nova's resize_confirm_window (`_poll_unconfirmed_resizes`): a resize or cold migration in
 * VERIFY_RESIZE longer than the window is confirmed as if its user asked (a `confirmResize` action
 * under a request id of its own). Returns how many were confirmed.
 */
export async function autoConfirmResizes(ports: ActionPorts, log: BuildLog, windowMs: number): Promise<number> {
  const due = await ports.actions.unconfirmedResizes(windowMs);
  for (const { migration: m, userId, projectId } of due) {
    const req: ActionRequest = {
      instanceUuid: m.instanceUuid,
      action: ACTION.confirmResize,
      requestId: `req-auto-confirm-${m.uuid}-${ports.clock.now().getTime()}`,
      rebootType: '',
      imageRef: '',
      displayName: '',
      migrationUuid: m.uuid,
      hostList: [],
      newFlavor: undefined,
      requestSpec: undefined,
      userId,
      projectId,
      blockMigration: '',
    };
    log.info({ instance_uuid: m.instanceUuid, migration_uuid: m.uuid, window_ms: windowMs }, 'resize_confirm_window passed: confirming');
    await onInstanceAction(ports, log, req, null);
  }
  return due.length;
}

/**
 * Migrations not over whose instance was deleted (a delete during a move or an evacuation `done`):
 * both consumers released (the instance's again: idempotent), the migration ended as `error`, any
 * guest on either host terminated. Returns how many were cleaned.
 */
export async function cleanDeletedInstancesMoves(ports: ActionPorts, log: BuildLog, limit = 100): Promise<number> {
  const orphans = await ports.actions.migrationsOfDeletedInstances(limit);
  for (const m of orphans) {
    const c = orphanCleanup(m.instanceUuid, m, undefined);
    for (const consumer of c.release) await ports.placement.release(consumer);
    await ports.actions.endMigration(m.uuid);
    await castAfterCommit(ports, log, {
      steps: [],
      terminate: c.terminate.map((host) => ({ instanceUuid: m.instanceUuid, host, reason: 'instance deleted during its move' })),
    });
    log.warn(
      { instance_uuid: m.instanceUuid, migration_uuid: m.uuid, status: m.status, hosts: c.terminate },
      'move of a deleted instance cleaned up',
    );
  }
  return orphans.length;
}
