import { BUS_ERROR, BusError, isPublishUnroutable } from '@cellsched/bus';
import { addInstanceFault, EVENT_COMPUTE_BUILD, EVENT_ERROR, finishActionEvent, updateInstance } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { Pool } from 'pg';
import type { CastResult, CellBuildPorts, CellBuildRecords, CellCaster, ClaimReleaser } from '../ports';
import type { CellHandle } from './cells';

/**
 * A cast to a cell: `unroutable` when nobody serves its key. A cell bus that refuses our user
 * (its permissions revoked: a cell cut off, an operator fixing its vhost) is an outage of that
 * cell, not a bad message: rethrown retryable, so the handler's transient retry and the bus's
 * redeliveries ride it out (minutes) instead of dead-lettering a build whose instance is
 * already in the cell. Anything else is thrown as it is.
 */
export async function castTo(send: () => Promise<unknown>): Promise<CastResult> {
  try {
    await send();
    return 'sent';
  } catch (err) {
    if (isPublishUnroutable(err)) return 'unroutable';
    if (err instanceof BusError && !err.retryable && (err.code === BUS_ERROR.publishRefused || err.code === BUS_ERROR.accessRefused)) {
      throw new BusError(err.code, `${err.message} (the cell's bus refuses us for now: retried)`, true, { cause: err });
    }
    throw err;
  }
}

/**
 * {@link CellCaster} over a cell's bus. Casting to a compute of a cell without a bus (cell0) is a
 * bug, thrown; without a conductor client, `build_instances` is `unroutable`.
 */
export function cellCaster(cell: CellHandle): CellCaster {
  const compute = (what: string) => {
    if (cell.compute === undefined) throw new Error(`cannot cast ${what}: cell ${cell.uuid} has no bus`);
    return cell.compute;
  };
  return {
    buildAndRunInstance: async (host, request) => {
      const c = compute(`the build of ${request.instance?.uuid ?? ''}`);
      return castTo(() => c.cast('buildAndRunInstance', request, { server: host }));
    },
    terminateInstance: async (host, request) => {
      const c = compute(`the terminate of ${request.instanceUuid}`);
      return castTo(() => c.cast('terminateInstance', request, { server: host }));
    },
    buildInstances: async (request) => {
      const conductor = cell.conductor;
      return conductor === undefined ? 'unroutable' : castTo(() => conductor.cast('buildInstances', request));
    },
  };
}

/** {@link CellBuildRecords} over a cell's database. */
export function cellBuildRecords(pool: Pool): CellBuildRecords {
  return {
    failBuild: (uuid, host, requestId, fault) =>
      withTransaction(pool, async (c) => {
        const r = await updateInstance(
          c,
          uuid,
          { vmState: 'error', taskState: null, buildHostList: [], buildDeadlineAt: null },
          { expectedVmState: ['building'], expectedHost: host },
        );
        if (r.kind !== 'updated') return false;
        await addInstanceFault(c, { instanceUuid: uuid, code: 500, message: fault.message, host, details: fault.details });
        if (requestId !== '')
          await finishActionEvent(
            c,
            { instanceUuid: uuid, requestId, event: EVENT_COMPUTE_BUILD, host },
            { result: EVENT_ERROR, details: fault.message },
          );
        return true;
      }),
  };
}

/** The ports of a build in `cell`. */
export function cellBuildPorts(cell: CellHandle, claims: ClaimReleaser): CellBuildPorts {
  return { cell: cellCaster(cell), builds: cellBuildRecords(cell.pool), claims };
}
