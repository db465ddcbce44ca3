import { BUS_ERROR, BusError, isPublishUnroutable } from '@cellsched/bus';
import { addInstanceFault, EVENT_COMPUTE_BUILD, EVENT_ERROR, finishActionEvent, updateInstance } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import { makeFailure } from '@cellsched/grpc';
import { FAILURE_CODES, type BuildAndRunInstanceRequest } from '@cellsched/wire';
import type { Logger } from 'pino';
import type { BuildDeps } from './build-deps';
import type { CellHandle } from './cells';

/** The failure recorded when the broker refused the first build cast: no compute serves the chosen host. */
export const BUILD_CAST_UNROUTABLE = FAILURE_CODES.superConductor.buildUnroutable;

/**
 * The first build cast of an instance was refused by the broker: no compute process serves
 * the chosen host (it was removed, or its process restarted without it). That is a failure of
 * that host for this request, never a silent end: the build goes to the cell conductor as a
 * reschedule (`build_instances`, the in-cell retry through the alternates, exactly as after a
 * compute's reschedulable failure). If the cell has no conductor queue either, the instance
 * goes to ERROR with a fault saying so and its claim is released. Idempotent (the cell
 * conductor recognises a repeat by host and attempt; the ERROR update is guarded).
 */
export async function handOverRefusedBuild(deps: BuildDeps, cell: CellHandle, build: BuildAndRunInstanceRequest, host: string, log: Logger): Promise<'rescheduled' | 'error'> {
  const uuid = build.instance?.uuid ?? '';
  const failure = makeFailure(BUILD_CAST_UNROUTABLE, `the broker refused the build cast to compute.${host}: no compute serves host ${host}`, { retryable: true, expected: true });
  log.warn({ instance_uuid: uuid, host, target_cell: cell.name }, 'build cast refused by the broker: handing it to the cell conductor');
  try {
    if (cell.conductor === undefined) throw new BusError(BUS_ERROR.publishUnroutable, `cell ${cell.name} has no bus`, false);
    await cell.conductor.cast('buildInstances', {
      instance: build.instance, requestSpec: build.requestSpec, hostList: build.hostList.slice(1), failedHost: host, attempt: build.attempt, requestId: build.requestId, failure,
    });
    return 'rescheduled';
  } catch (err) {
    if (!isPublishUnroutable(err)) throw err;
  }
  await failBuild(deps, cell, uuid, host, build.requestId, `Build of instance ${uuid} could not start: no compute serves host ${host} and cell ${cell.name} has no conductor to retry it`);
  log.error({ instance_uuid: uuid, host, target_cell: cell.name }, 'build refused and the cell has no conductor queue: instance in ERROR');
  return 'error';
}

/** Releases the claim, then ERROR with a fault, if the instance is still building on `host` (guarded). */
async function failBuild(deps: BuildDeps, cell: CellHandle, uuid: string, host: string, requestId: string, message: string): Promise<void> {
  await deps.claims.release([uuid]);
  await withTransaction(cell.pool, async (c) => {
    const r = await updateInstance(c, uuid, { vmState: 'error', taskState: null, buildHostList: [], buildDeadlineAt: null }, { expectedVmState: ['building'], expectedHost: host });
    if (r.kind !== 'updated') return;
    await addInstanceFault(c, { instanceUuid: uuid, code: 500, message, host, details: BUILD_CAST_UNROUTABLE });
    if (requestId !== '') await finishActionEvent(c, { instanceUuid: uuid, requestId, event: EVENT_COMPUTE_BUILD, host }, { result: EVENT_ERROR, details: message });
  });
}
