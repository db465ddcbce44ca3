import {
  addInstanceFault,
  advanceInstanceTask,
  createInstanceTask,
  endInstanceTask,
  EVENT_ERROR,
  EVENT_SUCCESS,
  finishActionEvent,
  finishInstanceAction,
  getInstance,
  getInstanceAction,
  getInstanceTask,
  getMigration,
  listEvacuationsAwaitingSource,
  listInstances,
  listMigrationsOfDeletedInstances,
  listOverdueInstanceTasks,
  listUnconfirmedResizes,
  MIGRATION_FINAL_STATUSES,
  startInstanceAction,
  toWireInstance,
  updateInstance,
  updateMigration,
  type InstanceRecord,
  type InstanceTaskRecord,
  type MigrationRecord,
  type Queryable,
} from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { Pool, PoolClient } from 'pg';
import type { ActionInstance, ActionRepository, ActionSnapshot, ActionTask, ActionTransaction, MigrationView, OverdueTask } from '../ports';

/** The decisions' view of an instance row (with its wire form, tagged with the cell). Pure. */
export function actionInstanceOf(r: InstanceRecord, cellUuid: string): ActionInstance {
  return {
    uuid: r.uuid,
    projectId: r.projectId,
    userId: r.userId,
    vmState: r.vmState,
    taskState: r.taskState,
    powerState: r.powerState,
    host: r.host,
    node: r.node,
    flavor: r.flavor,
    oldFlavor: r.oldFlavor,
    newFlavor: r.newFlavor,
    imageRef: r.imageRef,
    wire: toWireInstance(r, cellUuid),
  };
}

/** The decisions' view of a task row. Pure. */
export function actionTaskOf(t: InstanceTaskRecord): ActionTask {
  return {
    requestId: t.requestId,
    action: t.action,
    step: t.step,
    stepHost: t.stepHost,
    attempt: t.attempt,
    enteredBy: t.enteredBy,
    migrationUuid: t.migrationUuid,
    hostList: t.hostList,
    requestSpec: t.requestSpec,
    params: t.params,
    priorVmState: t.priorVmState,
    failure: t.failure,
  };
}

/** The decisions' view of a migration row. Pure. */
export function migrationViewOf(m: MigrationRecord): MigrationView {
  return {
    uuid: m.uuid,
    instanceUuid: m.instanceUuid,
    migrationType: m.migrationType,
    status: m.status,
    sourceCompute: m.sourceCompute,
    sourceNode: m.sourceNode,
    destCompute: m.destCompute,
    destNode: m.destNode,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function migrationOf(db: Queryable, uuid: string | null | undefined): Promise<MigrationView | undefined> {
  if (uuid === null || uuid === undefined || !UUID.test(uuid)) return undefined;
  const m = await getMigration(db, uuid);
  return m === undefined ? undefined : migrationViewOf(m);
}

/** Ends a migration that is not over as `error` (Nova soft-deletes a deleted instance's; we keep it listed). */
async function endMigration(db: Queryable, uuid: string): Promise<void> {
  await db.query(
    `UPDATE migrations SET status = 'error', updated_at = now() WHERE uuid = $1 AND deleted_at IS NULL AND NOT (status = ANY($2::text[]))`,
    [uuid, [...MIGRATION_FINAL_STATUSES]],
  );
}

function actionTransaction(c: PoolClient, cellUuid: string): ActionTransaction {
  return {
    updateInstance: async (uuid, change) => {
      const r = await updateInstance(c, uuid, change);
      if (r.kind !== 'updated') throw new Error(`instance ${uuid} vanished under its row lock (${r.kind})`);
      return actionInstanceOf(r.instance, cellUuid);
    },
    updateMigration: async (uuid, change) => {
      const m = await updateMigration(c, uuid, change);
      return m === undefined ? undefined : migrationViewOf(m);
    },
    endMigration: (uuid) => endMigration(c, uuid),
    addFault: async (uuid, f) => {
      await addInstanceFault(c, { instanceUuid: uuid, code: 500, message: f.message, host: f.host, details: f.details });
    },
    recordEvent: async (inst, requestId, action, e) => {
      if (requestId === '') return;
      await startInstanceAction(c, { instanceUuid: inst.uuid, requestId, action, userId: inst.userId, projectId: inst.projectId });
      await finishActionEvent(
        c,
        { instanceUuid: inst.uuid, requestId, event: e.event, host: e.host },
        { result: e.ok ? EVENT_SUCCESS : EVENT_ERROR, ...(e.details === undefined ? {} : { details: e.details }) },
      );
    },
    finishAction: async (uuid, requestId) => {
      if (requestId !== '') await finishInstanceAction(c, uuid, requestId);
    },
    startTask: async (uuid, t) => {
      await createInstanceTask(c, {
        instanceUuid: uuid,
        requestId: t.requestId,
        action: t.action,
        step: t.next.step,
        stepHost: t.next.host,
        attempt: t.next.attempt,
        deadlineAt: t.deadlineAt,
        migrationUuid: t.migrationUuid,
        hostList: t.next.hostList ?? [],
        ...(t.requestSpec === undefined ? {} : { requestSpec: t.requestSpec }),
        params: t.params,
        priorVmState: t.priorVmState,
        traceParent: t.traceParent,
      });
    },
    advanceTask: async (uuid, from, n) => {
      const t = await advanceInstanceTask(
        c,
        uuid,
        { requestId: from.requestId, step: from.step, stepHost: from.stepHost, attempt: from.attempt },
        {
          step: n.step,
          stepHost: n.host,
          attempt: n.attempt,
          deadlineAt: n.deadlineAt,
          enteredBy: n.enteredBy,
          ...(n.hostList === undefined ? {} : { hostList: n.hostList }),
          ...(n.failure === undefined ? {} : { failure: n.failure }),
        },
      );
      return t === undefined ? undefined : actionTaskOf(t);
    },
    endTask: async (uuid, requestId) => {
      await endInstanceTask(c, uuid, requestId);
    },
  };
}

/** Locks the live instance row (SELECT … FOR UPDATE); undefined when it is gone. */
async function lockInstance(c: PoolClient, uuid: string): Promise<InstanceRecord | undefined> {
  if (!UUID.test(uuid)) return undefined;
  return getInstance(c, uuid, { forUpdate: true });
}

/**
 * {@link ActionRepository} over the cell's PostgreSQL: one transaction per decision, the instance's
 * row lock first (the build handlers and the super-conductor's delete take the same lock).
 */
export class PgActionRepository implements ActionRepository {
  constructor(
    private readonly pool: Pool,
    private readonly cellUuid: string,
  ) {}

  withLockedAction<T>(
    instanceUuid: string,
    o: { readonly requestId: string; readonly migrationUuid: string },
    fn: (snap: ActionSnapshot | undefined, tx: ActionTransaction, migration: MigrationView | undefined) => Promise<T>,
  ): Promise<T> {
    return withTransaction(this.pool, async (c) => {
      const rec = await lockInstance(c, instanceUuid);
      const named = await migrationOf(c, o.migrationUuid);
      if (rec === undefined) return fn(undefined, actionTransaction(c, this.cellUuid), named);
      const t = await getInstanceTask(c, rec.uuid);
      const migration = t?.migrationUuid != null ? await migrationOf(c, t.migrationUuid) : named;
      const action = o.requestId === '' ? undefined : await getInstanceAction(c, rec.uuid, o.requestId);
      const snap: ActionSnapshot = {
        instance: actionInstanceOf(rec, this.cellUuid),
        task: t === undefined ? undefined : actionTaskOf(t),
        migration,
        actionFinished: action?.finishTime != null,
      };
      return fn(snap, actionTransaction(c, this.cellUuid), named);
    });
  }

  async overdueTasks(o: { readonly serviceDownTimeMs: number; readonly limit: number }): Promise<OverdueTask[]> {
    const overdue = await listOverdueInstanceTasks(this.pool, { serviceDownTimeMs: o.serviceDownTimeMs, limit: o.limit });
    return overdue.map((t) => ({ ...t, migrationUuid: t.migrationUuid ?? '' }));
  }

  async evacuationsAwaitingSource(hosts: readonly string[]): Promise<{ migration: MigrationView; instance: ActionInstance | undefined }[]> {
    const ms = await listEvacuationsAwaitingSource(this.pool, hosts);
    if (ms.length === 0) return [];
    const live = new Map((await listInstances(this.pool, { uuids: ms.map((m) => m.instanceUuid) })).map((i) => [i.uuid, i]));
    return ms.map((m) => {
      const i = live.get(m.instanceUuid);
      return { migration: migrationViewOf(m), instance: i === undefined ? undefined : actionInstanceOf(i, this.cellUuid) };
    });
  }

  async unconfirmedResizes(windowMs: number): Promise<{ migration: MigrationView; userId: string; projectId: string }[]> {
    const ms = await listUnconfirmedResizes(this.pool, { windowMs });
    if (ms.length === 0) return [];
    const live = new Map((await listInstances(this.pool, { uuids: ms.map((m) => m.instanceUuid) })).map((i) => [i.uuid, i]));
    return ms.flatMap((m) => {
      const i = live.get(m.instanceUuid);
      return i === undefined ? [] : [{ migration: migrationViewOf(m), userId: i.userId, projectId: i.projectId }];
    });
  }

  async migrationsOfDeletedInstances(limit: number): Promise<MigrationView[]> {
    return (await listMigrationsOfDeletedInstances(this.pool, { limit })).map(migrationViewOf);
  }

  getMigration(uuid: string): Promise<MigrationView | undefined> {
    return migrationOf(this.pool, uuid);
  }

  async resizeMigrationOf(instanceUuid: string): Promise<string | undefined> {
    if (!UUID.test(instanceUuid)) return undefined;
    const r = await this.pool.query<{ uuid: string }>(
      `SELECT uuid FROM migrations WHERE instance_uuid = $1 AND deleted_at IS NULL AND migration_type IN ('migration', 'resize')
         AND status IN ('finished', 'confirming', 'reverting') ORDER BY id DESC LIMIT 1`,
      [instanceUuid],
    );
    return r.rows[0]?.uuid;
  }

  async setMigrationStatus(uuid: string, status: string, expected: readonly string[]): Promise<boolean> {
    return (await updateMigration(this.pool, uuid, { status }, expected)) !== undefined;
  }

  endMigration(uuid: string): Promise<void> {
    return endMigration(this.pool, uuid);
  }
}
