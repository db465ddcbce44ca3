import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import type { PoolClient } from 'pg';
import { RequestSpec } from '@cellsched/wire';
import {
  activateBuild,
  activateBuilds,
  CELL_DB_MIGRATIONS_DIR,
  createInstanceWithAction,
  createInstancesWithActions,
  getInstance,
  updateInstance,
  finishActionEvent,
  startActionAndFinishEvent,
  finishInstanceAction,
  getInstanceAction,
  listInstanceActions,
  startActionEvent,
  startInstanceAction,
} from '@cellsched/cell-db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'celldb_act', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

describe('instance actions and events', () => {
  it('record a create with a reschedule: one action, one event per host, redeliveries ignored', async () => {
    const instanceUuid = randomUUID();
    const requestId = `req-${randomUUID()}`;
    const first = await startInstanceAction(db.pool, { instanceUuid, requestId, action: 'create', userId: 'u', projectId: 'p' });
    expect(first.created).toBe(true);
    expect(await startInstanceAction(db.pool, { instanceUuid, requestId, action: 'create' })).toEqual({ id: first.id, created: false });

    const build = { instanceUuid, requestId, event: 'compute__do_build_and_run_instance' };
    expect(await startActionEvent(db.pool, { ...build, event: 'conductor_schedule_and_build_instances', host: null })).toBe(true);
    expect(
      await finishActionEvent(db.pool, { ...build, event: 'conductor_schedule_and_build_instances', host: null }, { result: 'Success' }),
    ).toBe(true);
    expect(await startActionEvent(db.pool, { ...build, host: 'hA' })).toBe(true);
    expect(await startActionEvent(db.pool, { ...build, host: 'hA' })).toBe(false);
    expect(
      await finishActionEvent(
        db.pool,
        { ...build, host: 'hA' },
        { result: 'Error', traceback: 'BuildAbortException', details: 'disk full' },
      ),
    ).toBe(true);
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
      ['compute__do_build_and_run_instance', 'hB', 'Success'],
    ]);
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
    await expect(startInstanceAction(db.pool, { instanceUuid, requestId: '', action: 'create' })).rejects.toMatchObject({
      code: 'cell_db.instance_action.invalid',
    });
    await expect(
      finishActionEvent(db.pool, { instanceUuid, requestId: 'r1', event: 'e', host: 'h' }, { result: 'Maybe' as never }),
    ).rejects.toMatchObject({ code: 'cell_db.instance_action.invalid' });
  });
});

describe('one-statement writes of the build path', () => {
  const flavor = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };

  it('createInstanceWithAction creates the instance, its action and the finished event; a repeat returns the row as it is', async () => {
    const uuid = randomUUID();
    const requestId = `req-${randomUUID()}`;
    const created = await createInstanceWithAction(
      db.pool,
      { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building', taskState: 'scheduling', host: 'h1' },
      { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host: 'h1' },
    );
    expect(created).toMatchObject({ created: true, instance: { uuid, vmState: 'building', host: 'h1', projectId: 'p' } });
    const again = await createInstanceWithAction(
      db.pool,
      { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building', host: 'h2' },
      { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host: 'h1' },
    );
    expect(again).toMatchObject({ created: false, instance: { uuid, host: 'h1' } });
    const actions = await listInstanceActions(db.pool, uuid);
    expect(actions.map((a) => [a.action, a.requestId, a.userId, a.projectId, a.events.map((e) => [e.event, e.host, e.result])])).toEqual([
      ['create', requestId, 'u', 'p', [['conductor_schedule_and_build_instances', 'h1', 'Success']]],
    ]);
    await expect(
      createInstanceWithAction(
        db.pool,
        { uuid: randomUUID(), projectId: 'p', userId: 'u', flavor, vmState: 'building' },
        { requestId: '', action: 'create', event: 'x', host: null },
      ),
    ).rejects.toMatchObject({ code: 'cell_db.instance_action.invalid' });
  });

  it('createInstancesWithActions writes several in one statement, each whole as alone; a repeat in the batch is answered with its row; bad input refused before anything is sent', async () => {
    const requestId = `req-${randomUUID()}`;
    const uuids = [randomUUID(), randomUUID(), randomUUID()];
    const spec = RequestSpec.fromPartial({ instanceUuid: uuids[1], numInstances: 1, projectId: 'p2' });
    const item = (uuid: string, host: string, extra: object = {}) => ({
      instance: {
        uuid,
        projectId: 'p2',
        userId: 'u2',
        flavor,
        vmState: 'building' as const,
        taskState: 'scheduling',
        host,
        node: host,
        ...extra,
      },
      action: { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host },
    });
    const [u0, u1, u2] = uuids as [string, string, string];
    await createInstanceWithAction(db.pool, item(u0, 'h9').instance, item(u0, 'h9').action);
    const deadline = new Date('2026-11-27T10:00:00Z');
    const out = await createInstancesWithActions(db.pool, [
      item(u1, 'h1', {
        buildRequestSpec: spec,
        buildDeadlineAt: deadline,
        traceParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      }),
      item(u0, 'h1'),
      item(u2, 'h2', { displayName: 'vm-2', launchIndex: 2 }),
    ]);
    expect(out.map((x) => [x.created, x.instance.uuid, x.instance.host])).toEqual([
      [true, u1, 'h1'],
      [false, u0, 'h9'],
      [true, u2, 'h2'],
    ]);
    expect(await getInstance(db.pool, u1)).toMatchObject({ buildDeadlineAt: deadline, buildRequestSpec: { projectId: 'p2' }, flavor });
    expect(await getInstance(db.pool, u2)).toMatchObject({
      displayName: 'vm-2',
      launchIndex: 2,
      vmState: 'building',
      taskState: 'scheduling',
    });
    for (const [u, host] of [
      [u0, 'h9'],
      [u1, 'h1'],
      [u2, 'h2'],
    ] as const) {
      const actions = await listInstanceActions(db.pool, u);
      expect(actions.map((a) => [a.action, a.userId, a.projectId, a.events.map((e) => [e.event, e.host, e.result])])).toEqual([
        [
          'create',
          'u2',
          'p2',
          [
            ['conductor_schedule_and_build_instances', host, 'Success'],
            ...(u === u0 ? [['conductor_schedule_and_build_instances', 'h1', 'Success']] : []),
          ],
        ],
      ]);
    }
    // one instance twice in one statement: PostgreSQL refuses it (the group commit then writes each alone)
    const u3 = randomUUID();
    await expect(createInstancesWithActions(db.pool, [item(u3, 'h3'), item(u3, 'h3')])).rejects.toThrow(/cannot affect row a second time/);
    expect(await getInstance(db.pool, u3)).toBeUndefined();
    await expect(createInstancesWithActions(db.pool, [item(randomUUID(), 'h4'), item('not-a-uuid', 'h4')])).rejects.toMatchObject({
      code: 'cell_db.invalid_uuid',
    });
    expect(await createInstancesWithActions(db.pool, [])).toEqual([]);
  });

  it('activateBuild: ACTIVE with its event in one statement only while building that attempt on that host; otherwise nothing', async () => {
    const uuid = randomUUID();
    const requestId = `req-${randomUUID()}`;
    await createInstanceWithAction(
      db.pool,
      { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building', taskState: 'spawning', host: 'h1', node: 'n1' },
      { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host: null },
    );
    await updateInstance(db.pool, uuid, { buildAttempt: 2, buildDeadlineAt: new Date(Date.now() + 60_000) });
    const at = new Date('2026-11-27T01:02:03Z');
    const build = { uuid, host: 'h1', attempt: 2, node: '', launchedAt: at, requestId, event: 'compute__do_build_and_run_instance' };
    // another host's or another attempt's report changes nothing
    expect(await activateBuild(db.pool, { ...build, host: 'h2' })).toBeUndefined();
    expect(await activateBuild(db.pool, { ...build, attempt: 1 })).toBeUndefined();
    expect(await getInstance(db.pool, uuid)).toMatchObject({ vmState: 'building', taskState: 'spawning', launchedAt: null });

    expect(await activateBuild(db.pool, build)).toEqual({ userId: 'u', projectId: 'p', eventRecorded: true });
    expect(await getInstance(db.pool, uuid)).toMatchObject({
      vmState: 'active',
      taskState: null,
      powerState: 1,
      host: 'h1',
      node: 'n1',
      launchedAt: at,
      buildHostList: [],
      buildDeadlineAt: null,
    });
    // a repeat activates nothing and records no second event
    expect(await activateBuild(db.pool, { ...build, launchedAt: new Date() })).toBeUndefined();
    const [a] = await listInstanceActions(db.pool, uuid);
    expect(a?.events.map((e) => [e.event, e.host, e.result]).sort()).toEqual([
      ['compute__do_build_and_run_instance', 'h1', 'Success'],
      ['conductor_schedule_and_build_instances', null, 'Success'],
    ]);
    expect((await getInstance(db.pool, uuid))?.launchedAt).toEqual(at);
  });

  it('activateBuilds: several successes in one statement, each answered in order; a stale report and a repeat activate nothing', async () => {
    const mk = async (host: string) => {
      const uuid = randomUUID();
      const requestId = `req-${randomUUID()}`;
      await createInstanceWithAction(
        db.pool,
        { uuid, projectId: `p-${host}`, userId: 'u', flavor, vmState: 'building', host, node: `${host}n` },
        { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host: null },
      );
      return {
        uuid,
        host,
        attempt: 1,
        node: '',
        launchedAt: new Date('2026-11-27T01:02:03Z'),
        requestId,
        event: 'compute__do_build_and_run_instance',
      };
    };
    const [a, b, c] = [await mk('ha'), await mk('hb'), await mk('hc')];
    const done = await activateBuilds(db.pool, [
      a,
      { ...b, attempt: 2 }, // another attempt's report: nothing
      b,
      b, // the same report twice: answered once
      { ...c, requestId: '' },
    ]);
    expect(done).toEqual([
      { userId: 'u', projectId: 'p-ha', eventRecorded: true },
      undefined,
      { userId: 'u', projectId: 'p-hb', eventRecorded: true },
      undefined,
      { userId: 'u', projectId: 'p-hc', eventRecorded: false },
    ]);
    for (const x of [a, b, c])
      expect(await getInstance(db.pool, x.uuid)).toMatchObject({ vmState: 'active', host: x.host, node: `${x.host}n` });
    const events = async (u: string) => (await listInstanceActions(db.pool, u)).flatMap((x) => x.events.map((e) => [e.event, e.host]));
    expect((await events(b.uuid)).sort()).toEqual([
      ['compute__do_build_and_run_instance', 'hb'],
      ['conductor_schedule_and_build_instances', null],
    ]);
    expect(await events(c.uuid)).toEqual([['conductor_schedule_and_build_instances', null]]);
    expect(await activateBuilds(db.pool, [a, b])).toEqual([undefined, undefined]);
    expect(await activateBuilds(db.pool, [])).toEqual([]);
  });

  it('activateBuilds reads the instances it activates, not every building one (its cost does not grow with the backlog)', async () => {
    // a backlog of 2,000 building instances on other hosts, with fresh statistics
    await db.pool.query(
      `INSERT INTO instances (uuid, project_id, user_id, flavor, vm_state, host, node, build_deadline_at)
       SELECT gen_random_uuid(), 'p', 'u', '{}'::jsonb, 'building', 'backlog-' || (g % 50), 'n', now() + interval '1 hour' FROM generate_series(1, 2000) g`,
    );
    await db.pool.query('ANALYZE instances');
    const builds = [];
    for (let i = 0; i < 4; i++) {
      const uuid = randomUUID();
      const requestId = `req-${uuid}`;
      await createInstanceWithAction(
        db.pool,
        { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building', host: 'hr', node: 'hrn' },
        { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host: 'hr' },
      );
      builds.push({
        uuid,
        host: 'hr',
        attempt: 1,
        node: '',
        launchedAt: new Date(),
        requestId,
        event: 'compute__do_build_and_run_instance',
      });
    }
    // NOTE: the transaction's table counters (pg_stat_xact_user_tables) read just before and just after the one
    // statement: their difference is the instance rows it read (the counters may also hold earlier reads of
    // this connection not yet flushed, which the difference leaves out)
    const readSoFar = async (c: PoolClient): Promise<number> =>
      Number(
        (
          await c.query<{ n: string }>(
            `SELECT (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::text AS n FROM pg_stat_xact_user_tables WHERE relname = 'instances'`,
          )
        ).rows[0]?.n ?? 0,
      );
    const c = await db.pool.connect();
    try {
      await c.query('BEGIN');
      const before = await readSoFar(c);
      const done = await activateBuilds(c, builds);
      const read = (await readSoFar(c)) - before;
      await c.query('COMMIT');
      expect(done.every((d) => d !== undefined)).toBe(true);
      expect(read).toBeLessThan(50);
    } finally {
      c.release();
      await db.pool.query(`DELETE FROM instances WHERE host LIKE 'backlog-%'`);
    }
  });

  it('activateBuild: the reported node is taken; without a request id no event; a missing action is started', async () => {
    const uuid = randomUUID();
    await createInstanceWithAction(
      db.pool,
      { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building', host: 'h1', node: 'n1' },
      { requestId: `req-${randomUUID()}`, action: 'create', event: 'conductor_schedule_and_build_instances', host: null },
    );
    const build = {
      uuid,
      host: 'h1',
      attempt: 1,
      node: 'n9',
      launchedAt: new Date(),
      requestId: '',
      event: 'compute__do_build_and_run_instance',
    };
    expect(await activateBuild(db.pool, build)).toEqual({ userId: 'u', projectId: 'p', eventRecorded: false });
    expect((await getInstance(db.pool, uuid))?.node).toBe('n9');
    expect((await listInstanceActions(db.pool, uuid)).flatMap((x) => x.events.map((e) => e.event))).toEqual([
      'conductor_schedule_and_build_instances',
    ]);

    const other = randomUUID();
    await createInstanceWithAction(
      db.pool,
      { uuid: other, projectId: 'p', userId: 'u', flavor, vmState: 'building', host: 'h1' },
      { requestId: 'r-first', action: 'create', event: 'conductor_schedule_and_build_instances', host: null },
    );
    expect(await activateBuild(db.pool, { ...build, uuid: other, requestId: 'r-second' })).toMatchObject({ eventRecorded: true });
    const second = await getInstanceAction(db.pool, other, 'r-second');
    expect([second?.action, second?.userId, second?.events.map((e) => [e.event, e.host, e.result])]).toEqual([
      'create',
      'u',
      [['compute__do_build_and_run_instance', 'h1', 'Success']],
    ]);
  });

  it('startActionAndFinishEvent starts a missing action, records the event, marks the action Error on an error, idempotently', async () => {
    const instanceUuid = randomUUID();
    const requestId = `req-${randomUUID()}`;
    const action = { instanceUuid, requestId, action: 'create', userId: 'u', projectId: 'p' };
    expect(
      await startActionAndFinishEvent(
        db.pool,
        action,
        { event: 'compute__do_build_and_run_instance', host: 'hA' },
        { result: 'Error', details: 'disk full' },
      ),
    ).toBe(true);
    expect(
      await startActionAndFinishEvent(db.pool, action, { event: 'compute__do_build_and_run_instance', host: 'hB' }, { result: 'Success' }),
    ).toBe(true);
    expect(
      await startActionAndFinishEvent(db.pool, action, { event: 'compute__do_build_and_run_instance', host: 'hB' }, { result: 'Success' }),
    ).toBe(true);
    const [a] = await listInstanceActions(db.pool, instanceUuid);
    expect(a?.message).toBe('Error');
    expect(a?.events.map((e) => [e.host, e.result, e.details]).sort()).toEqual([
      ['hA', 'Error', 'disk full'],
      ['hB', 'Success', null],
    ]);
    const fresh = { ...action, instanceUuid: randomUUID() };
    expect(await startActionAndFinishEvent(db.pool, fresh, { event: 'e', host: null }, { result: 'Success' })).toBe(true);
    expect((await listInstanceActions(db.pool, fresh.instanceUuid))[0]?.message).toBeNull();
    await expect(startActionAndFinishEvent(db.pool, fresh, { event: 'e', host: null }, { result: 'Maybe' as never })).rejects.toMatchObject(
      { code: 'cell_db.instance_action.invalid' },
    );
  });
});
