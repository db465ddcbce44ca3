import {
  addInstanceFault,
  createMigration,
  EVENT_ERROR,
  EVENT_SUCCESS,
  finishActionEvent,
  getInstance,
  getInstanceAction,
  getMigration,
  getService,
  lockInstanceServerAction,
  setMigrationDestination,
  startActionEvent,
  startInstanceAction,
  updateInstance,
  updateMigrationStatus,
  type InstanceRecord,
  type Queryable,
  type VmStateName,
} from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { Pool } from 'pg';
import type { ActionBegin, ActionFailure, ActionGiveUp, ActionInstance, ActionState, ServerActionRecords } from '../ports';

const view = (i: InstanceRecord): ActionInstance => ({
  uuid: i.uuid,
  projectId: i.projectId,
  userId: i.userId,
  vmState: i.vmState,
  taskState: i.taskState,
  host: i.host,
  node: i.node,
  flavor: i.flavor,
  oldFlavor: i.oldFlavor,
  imageRef: i.imageRef,
  availabilityZone: i.availabilityZone,
  buildHostList: i.buildHostList,
});

async function read(db: Queryable, instanceUuid: string, requestId: string, migrationUuid: string | undefined): Promise<ActionState> {
  // NOTE: one after the other: inside `exclusive` they share one connection.
  const instance = await getInstance(db, instanceUuid);
  const action = await getInstanceAction(db, instanceUuid, requestId);
  const migration = migrationUuid === undefined ? undefined : await getMigration(db, migrationUuid);
  return {
    instance: instance === undefined ? undefined : view(instance),
    action: action === undefined ? undefined : { failed: action.message === EVENT_ERROR },
    migration:
      migration === undefined ? undefined : { status: migration.status, destCompute: migration.destCompute, destNode: migration.destNode },
  };
}

/** The guarded part of begin, after the action was recorded by this delivery. */
async function applyBegin(
  c: Queryable,
  b: ActionBegin,
): Promise<{ kind: 'applied' | 'refused'; instance: ActionInstance } | { kind: 'not_found' }> {
  const r = await updateInstance(
    c,
    b.instanceUuid,
    { taskState: b.taskState, ...(b.clearHostList ? { buildHostList: [] } : {}) },
    { expectedVmState: b.vmStates as VmStateName[], expectedTaskState: b.fromTaskStates },
  );
  if (r.kind === 'not_found') return r;
  if (r.kind !== 'updated') {
    const refused = view(r.instance);
    await finishActionEvent(
      c,
      { instanceUuid: b.instanceUuid, requestId: b.requestId, event: b.refusedEvent, host: b.refusedEventHost },
      { result: EVENT_ERROR, details: b.refusedDetails(refused) },
    );
    return { kind: 'refused', instance: refused };
  }
  for (const event of b.events)
    await startActionEvent(c, { instanceUuid: b.instanceUuid, requestId: b.requestId, event, host: b.conductorHost });
  const i = r.instance;
  if (b.migration !== undefined) {
    const types = b.migration.instanceTypeIds(i.flavor);
    await createMigration(c, {
      uuid: b.migration.uuid,
      instanceUuid: i.uuid,
      migrationType: b.migration.type,
      status: b.migration.status,
      sourceCompute: i.host,
      sourceNode: i.node,
      userId: b.userId || i.userId,
      projectId: b.projectId || i.projectId,
      oldInstanceTypeId: types.old,
      newInstanceTypeId: types.new,
    });
  }
  return { kind: 'applied', instance: view(i) };
}

async function fail(c: Queryable, f: ActionFailure): Promise<'failed' | 'gone'> {
  const r = await updateInstance(
    c,
    f.instanceUuid,
    { taskState: null, ...(f.vmState === undefined ? {} : { vmState: f.vmState }) },
    { expectedTaskState: [f.taskState] },
  );
  if (r.kind === 'not_found') return 'gone';
  if (f.migration !== undefined) await updateMigrationStatus(c, f.migration.uuid, 'error', [f.migration.fromStatus]);
  // NOTE: the fault only with the state change: a repeat (its guard fails) adds none.
  if (r.kind === 'updated')
    await addInstanceFault(c, {
      instanceUuid: f.instanceUuid,
      code: 500,
      message: f.fault.message,
      details: f.fault.details,
      host: r.instance.host,
    });
  for (const e of f.events) {
    // NOTE: the reason as the traceback too, which an admin's `server event show` prints before 2.84 (Nova's traceback ends with it)
    await finishActionEvent(
      c,
      { instanceUuid: f.instanceUuid, requestId: f.requestId, event: e.event, host: e.host },
      { result: EVENT_ERROR, details: f.fault.message, traceback: f.fault.message },
    );
  }
  return 'failed';
}

async function giveUp(c: Queryable, g: ActionGiveUp): Promise<'recorded' | 'duplicate' | 'not_found'> {
  const i = await getInstance(c, g.instanceUuid);
  if (i === undefined) return 'not_found';
  const { created } = await startInstanceAction(c, {
    instanceUuid: g.instanceUuid,
    requestId: g.requestId,
    action: g.action,
    userId: g.userId || null,
    projectId: g.projectId || null,
  });
  // NOTE: the action's unique key orders this against a delivery's begin: whichever records it first decides.
  if (!created) return 'duplicate';
  await addInstanceFault(c, { instanceUuid: g.instanceUuid, code: 500, message: g.fault.message, details: g.fault.details, host: i.host });
  // NOTE: the reason as the event's traceback too: what an admin's `server event show` prints before 2.84's details (Nova's traceback ends with it)
  await finishActionEvent(
    c,
    { instanceUuid: g.instanceUuid, requestId: g.requestId, event: g.event, host: g.host },
    { result: EVENT_ERROR, details: g.fault.message, traceback: g.fault.message },
  );
  return 'recorded';
}

/** The records' methods over one Queryable (a pool, or the client of an exclusive transaction). */
function recordsOn(db: Queryable, pool: Pool | undefined): Omit<ServerActionRecords, 'exclusive'> {
  const tx = <T>(fn: (c: Queryable) => Promise<T>): Promise<T> => (pool === undefined ? fn(db) : withTransaction(pool, fn));
  return {
    read: (instanceUuid, requestId, migrationUuid) => read(db, instanceUuid, requestId, migrationUuid),
    begin: (b) =>
      tx(async (c) => {
        if ((await getInstance(c, b.instanceUuid)) === undefined) return { kind: 'not_found' };
        const { created } = await startInstanceAction(c, {
          instanceUuid: b.instanceUuid,
          requestId: b.requestId,
          action: b.action,
          userId: b.userId || null,
          projectId: b.projectId || null,
        });
        // NOTE: the action's unique key serializes two deliveries: the second waits for the first's commit, then finds its action.
        return created ? applyBegin(c, b) : { kind: 'duplicate' };
      }),
    recordDestination: (d) =>
      tx(async (c) => {
        const i = await getInstance(c, d.instanceUuid);
        if (i === undefined) return 'gone';
        const chosen = d.hostList[0];
        if (chosen === undefined) return 'stale';
        if (d.migration !== undefined) {
          if (
            !(await setMigrationDestination(
              c,
              d.migration.uuid,
              { host: chosen.serviceHost, node: chosen.nodename },
              d.migration.fromStatus,
            ))
          )
            return 'stale';
          // NOTE: with the destination, so a recast after a crash still carries the alternates (recordedMoveHostList)
          await updateInstance(c, d.instanceUuid, { buildHostList: d.hostList });
          return 'recorded';
        }
        const r = await updateInstance(c, d.instanceUuid, { buildHostList: d.hostList }, { expectedTaskState: ['unshelving'] });
        return r.kind === 'updated' ? 'recorded' : r.kind === 'not_found' ? 'gone' : 'stale';
      }),
    fail: (f) => tx((c) => fail(c, f)),
    giveUp: (g) => tx((c) => giveUp(c, g)),
    computeService: async (host) => {
      const svc = await getService(db, host, 'nova-compute');
      return svc === undefined ? undefined : { forcedDown: svc.forcedDown, lastSeenUp: svc.lastSeenUp };
    },
    finishEvents: async (instanceUuid, requestId, events, host) => {
      for (const event of events) await finishActionEvent(db, { instanceUuid, requestId, event, host }, { result: EVENT_SUCCESS });
    },
  };
}

/**
 * {@link ServerActionRecords} over a cell's database (cell-db repositories): each method one
 * transaction; `exclusive` one transaction holding the instance's server-action advisory lock,
 * whose records all run on its connection.
 */
export function serverActionRecords(pool: Pool): ServerActionRecords {
  return {
    ...recordsOn(pool, pool),
    // NOTE: one attempt: `work` calls the scheduler and placement; a retry is the cast's, which resumes from the cell.
    exclusive: (instanceUuid, work) =>
      withTransaction(
        pool,
        async (c) => {
          await lockInstanceServerAction(c, instanceUuid);
          return work(recordsOn(c, undefined));
        },
        { maxAttempts: 1 },
      ),
  };
}
