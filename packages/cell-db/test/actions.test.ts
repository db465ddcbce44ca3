import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  CELL_DB_MIGRATIONS_DIR, finishActionEvent, finishInstanceAction, getInstanceAction, listInstanceActions, startActionEvent, startInstanceAction,
} from '@cellsched/cell-db';

let db: TestDatabase;
beforeAll(async () => { db = await createTestDatabase({ prefix: 'celldb_act', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR }); });
afterAll(async () => { await db.drop(); });

describe('instance actions and events', () => {
  it('record a create with a reschedule: one action, one event per host, redeliveries ignored', async () => {
    const instanceUuid = randomUUID();
    const requestId = `req-${randomUUID()}`;
    const first = await startInstanceAction(db.pool, { instanceUuid, requestId, action: 'create', userId: 'u', projectId: 'p' });
    expect(first.created).toBe(true);
    expect(await startInstanceAction(db.pool, { instanceUuid, requestId, action: 'create' })).toEqual({ id: first.id, created: false });

    const build = { instanceUuid, requestId, event: 'compute__do_build_and_run_instance' };
    expect(await startActionEvent(db.pool, { ...build, event: 'conductor_schedule_and_build_instances', host: null })).toBe(true);
    expect(await finishActionEvent(db.pool, { ...build, event: 'conductor_schedule_and_build_instances', host: null }, { result: 'Success' })).toBe(true);
    expect(await startActionEvent(db.pool, { ...build, host: 'hA' })).toBe(true);
    expect(await startActionEvent(db.pool, { ...build, host: 'hA' })).toBe(false);
    expect(await finishActionEvent(db.pool, { ...build, host: 'hA' }, { result: 'Error', traceback: 'BuildAbortException', details: 'disk full' })).toBe(true);
    expect(await startActionEvent(db.pool, { ...build, host: 'hB' })).toBe(true);
    expect(await finishActionEvent(db.pool, { ...build, host: 'hB' }, { result: 'Success' })).toBe(true);
    expect(await finishActionEvent(db.pool, { ...build, host: 'hB' }, { result: 'Success' })).toBe(true);
    expect(await finishInstanceAction(db.pool, instanceUuid, requestId)).toBe(true);

    const action = await getInstanceAction(db.pool, instanceUuid, requestId);
    expect(action).toMatchObject({ action: 'create', requestId, userId: 'u', projectId: 'p', message: 'Error' });
    expect(action?.finishTime).toBeInstanceOf(Date);
    expect(action?.events.map((e) => [e.event, e.host, e.result])).toEqual([
      ['conductor_schedule_and_build_instances', null, 'Success'],
      ['compute__do_build_and_run_instance', 'hA', 'Error'],
      ['compute__do_build_and_run_instance', 'hB', 'Success']]);
    expect(action?.events[1]).toMatchObject({ traceback: 'BuildAbortException', details: 'disk full' });
    expect(action?.events[2]?.startTime).toBeInstanceOf(Date);
    expect((await listInstanceActions(db.pool, instanceUuid)).map((a) => a.requestId)).toEqual([requestId]);
  });

  it('a finish without a recorded start creates the event; unknown actions report so', async () => {
    const instanceUuid = randomUUID();
    await startInstanceAction(db.pool, { instanceUuid, requestId: 'r1', action: 'create' });
    expect(await finishActionEvent(db.pool, { instanceUuid, requestId: 'r1', event: 'e', host: 'h' }, { result: 'Success' })).toBe(true);
    expect((await getInstanceAction(db.pool, instanceUuid, 'r1'))?.events.map((e) => e.result)).toEqual(['Success']);
    expect(await startActionEvent(db.pool, { instanceUuid, requestId: 'nope', event: 'e', host: 'h' })).toBeUndefined();
    expect(await finishActionEvent(db.pool, { instanceUuid, requestId: 'nope', event: 'e', host: 'h' }, { result: 'Success' })).toBe(false);
    expect(await finishInstanceAction(db.pool, instanceUuid, 'nope')).toBe(false);
    await expect(startInstanceAction(db.pool, { instanceUuid, requestId: '', action: 'create' })).rejects.toMatchObject({ code: 'cell_db.instance_action.invalid' });
    await expect(finishActionEvent(db.pool, { instanceUuid, requestId: 'r1', event: 'e', host: 'h' }, { result: 'Maybe' as never }))
      .rejects.toMatchObject({ code: 'cell_db.instance_action.invalid' });
  });
});
