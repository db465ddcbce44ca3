import {
  activateBuilds,
  addInstanceFault,
  checkUuid,
  EVENT_COMPUTE_BUILD,
  getInstance,
  toWireInstance,
  updateInstance,
  type BuildActivation,
  type BuildSuccess,
  type InstanceRecord,
} from '@cellsched/cell-db';
import { GroupCommit, withTransaction } from '@cellsched/db';
import type { Pool, PoolClient } from 'pg';
import type { BuildRepository, BuildTransaction, InstanceSnapshot } from '../ports';
import { createRequestId, recordEvent } from './action-events';

/** The domain's view of a row (with its wire form, tagged with the cell). Pure. */
export function snapshotOf(r: InstanceRecord, cellUuid: string): InstanceSnapshot {
  return {
    uuid: r.uuid,
    projectId: r.projectId,
    userId: r.userId,
    vmState: r.vmState,
    host: r.host,
    node: r.node,
    buildAttempt: r.buildAttempt,
    buildHostList: r.buildHostList,
    buildRequestSpec: r.buildRequestSpec,
    wire: toWireInstance(r, cellUuid),
  };
}

/**
 * Locks the live instance row (SELECT ... FOR UPDATE) inside the caller's transaction and
 * returns it, or undefined when it is gone (deleted during the build).
 */
function lockInstance(client: PoolClient, uuid: string): Promise<InstanceRecord | undefined> {
  return getInstance(client, uuid, { forUpdate: true });
}

const BUILDING = { expectedVmState: ['building' as const] };

/** The guarded writes of one decision, over the transaction's connection. */
function buildTransaction(c: PoolClient, cellUuid: string): BuildTransaction {
  return {
    recordEvent: (inst, requestId, event, host, outcome) => recordEvent(c, inst, requestId, event, host, outcome),
    createRequestId: (uuid) => createRequestId(c, uuid),
    moveBuild: async (uuid, m) => {
      const r = await updateInstance(
        c,
        uuid,
        {
          host: m.host,
          node: m.node,
          taskState: 'scheduling',
          buildAttempt: m.buildAttempt,
          buildHostList: m.buildHostList,
          buildDeadlineAt: m.buildDeadlineAt,
          ...(m.buildRequestSpec === undefined ? {} : { buildRequestSpec: m.buildRequestSpec }),
        },
        BUILDING,
      );
      return r.kind === 'updated' ? snapshotOf(r.instance, cellUuid) : undefined;
    },
    failBuild: async (uuid, fault, o) => {
      const r = await updateInstance(
        c,
        uuid,
        { vmState: 'error', taskState: null, ...(o.clearHost ? { host: null, node: null } : {}), buildHostList: [], buildDeadlineAt: null },
        BUILDING,
      );
      if (r.kind !== 'updated') return false;
      await addInstanceFault(c, { instanceUuid: uuid, code: 500, message: fault.message, host: fault.host, details: fault.details });
      return true;
    },
    activate: async (uuid, a) => {
      const r = await updateInstance(
        c,
        uuid,
        {
          vmState: 'active',
          taskState: null,
          powerState: 1,
          node: a.node,
          launchedAt: a.launchedAt,
          buildHostList: [],
          buildDeadlineAt: null,
        },
        BUILDING,
      );
      return r.kind === 'updated';
    },
  };
}

/**
 * {@link BuildRepository} over the cell's PostgreSQL: one transaction per decision, the row lock
 * first; `withTransaction` rolls back on a throw and retries serialization failures only.
 */
export class PgBuildRepository implements BuildRepository {
  /**
   * Builds' successes as a group commit: those reported while one statement runs go in the next.
   * NOTE: 'all-fail': sent again after a commit lost with its connection, a success would
   * activate nothing and be judged a repeat; failing the deliveries, their redeliveries judge it.
   */
  private readonly activations: GroupCommit<BuildSuccess, BuildActivation | undefined>;

  constructor(
    private readonly pool: Pool,
    private readonly cellUuid: string,
  ) {
    this.activations = new GroupCommit((builds) => activateBuilds(pool, builds), {
      onBatchError: 'all-fail',
      check: (b) => checkUuid(b.uuid, 'instance uuid'),
    });
  }

  withLockedInstance<T>(uuid: string, fn: (inst: InstanceSnapshot | undefined, tx: BuildTransaction) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, async (c) => {
      const rec = await lockInstance(c, uuid);
      return fn(rec === undefined ? undefined : snapshotOf(rec, this.cellUuid), buildTransaction(c, this.cellUuid));
    });
  }

  /**
   * One statement (row and event, one commit; shared with the successes reported meanwhile); the
   * event recorded apart only when its action was not visible to that statement.
   */
  async activateIfBuilding(a: Parameters<BuildRepository['activateIfBuilding']>[0]): Promise<boolean> {
    const done = await this.activations.write({
      uuid: a.instanceUuid,
      host: a.host,
      attempt: a.attempt,
      node: a.node,
      launchedAt: a.launchedAt,
      requestId: a.requestId,
      event: EVENT_COMPUTE_BUILD,
    });
    if (done === undefined) return false;
    // NOTE: only when a concurrent first start of the action was invisible to the statement: recordEvent's own fallback
    if (!done.eventRecorded && a.requestId !== '')
      await recordEvent(
        this.pool,
        { uuid: a.instanceUuid, userId: done.userId, projectId: done.projectId },
        a.requestId,
        'compute_build',
        a.host,
        { ok: true },
      );
    return true;
  }
}
