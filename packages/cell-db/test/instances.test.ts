import { randomUUID } from 'node:crypto';
import { createTestDatabase, withTransaction, type TestDatabase } from '@cellsched/db';
import {
  addInstanceFault,
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  destroyInstance,
  getInstance,
  getLatestInstanceFaults,
  listInstanceFaults,
  listInstanceHoldings,
  listInstances,
  listInstancesPastBuildDeadline,
  softDeleteInstance,
  toWireInstance,
  updateInstance,
  type NewInstance,
} from '@cellsched/cell-db';
import { RequestSpec, Selection, VmState } from '@cellsched/wire';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'celldb_inst', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

const flavor = {
  id: 0,
  flavorid: '1',
  name: 'm1.tiny',
  vcpus: 1,
  memoryMb: 512,
  rootGb: 1,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: { a: 'b' },
};
const alt = (host: string) =>
  Selection.fromPartial({
    computeNodeUuid: randomUUID(),
    serviceHost: host,
    nodename: host,
    cellUuid: randomUUID(),
    allocationRequest: { json: '{"allocations":{}}', version: '1.39' },
  });
const newInstance = (over: Partial<NewInstance> = {}): NewInstance => ({
  uuid: randomUUID(),
  projectId: 'p1',
  userId: 'u1',
  displayName: 'vm',
  flavor,
  imageRef: '155d900f-4e14-4e4c-a73d-069cbf4541e6',
  vmState: 'building',
  taskState: 'scheduling',
  ...over,
});

describe('instances', () => {
  it('createInstance is idempotent per uuid and round-trips JSON columns', async () => {
    const spec = RequestSpec.fromPartial({ instanceUuid: randomUUID(), flavor, seed: 7 });
    const input = newInstance({ host: 'h1', node: 'h1', buildHostList: [alt('h2'), alt('h3')], buildRequestSpec: spec, launchIndex: 2 });
    const first = await createInstance(db.pool, input);
    expect(first.created).toBe(true);
    expect(first.instance).toMatchObject({
      uuid: input.uuid,
      vmState: 'building',
      taskState: 'scheduling',
      flavor,
      buildAttempt: 1,
      launchIndex: 2,
      powerState: 0,
      deletedAt: null,
    });
    expect(first.instance.buildHostList.map((s) => s.serviceHost)).toEqual(['h2', 'h3']);
    expect(first.instance.buildHostList[0]).toEqual(input.buildHostList?.[0]);
    expect(first.instance.buildRequestSpec).toEqual(spec);
    const again = await createInstance(db.pool, { ...input, displayName: 'other', vmState: 'error' });
    expect(again).toEqual({ instance: first.instance, created: false });
    const wire = toWireInstance(first.instance, 'cell-uuid');
    expect(wire).toMatchObject({
      uuid: input.uuid,
      vmState: VmState.VM_STATE_BUILDING,
      taskState: 'scheduling',
      host: 'h1',
      cellUuid: 'cell-uuid',
    });
  });

  it('refuses bad input, writing nothing', async () => {
    await expect(createInstance(db.pool, newInstance({ projectId: '' }))).rejects.toMatchObject({ code: 'cell_db.instance.invalid' });
    await expect(createInstance(db.pool, newInstance({ uuid: 'nope' }))).rejects.toMatchObject({ code: 'cell_db.invalid_uuid' });
    await expect(createInstance(db.pool, newInstance({ vmState: 'flying' as never }))).rejects.toMatchObject({ code: '23514' });
  });

  it("updateInstance applies Nova's expected_task_state / expected_vm_state guards", async () => {
    const { instance } = await createInstance(db.pool, newInstance());
    const ok = await updateInstance(
      db.pool,
      instance.uuid,
      { taskState: 'spawning', host: 'h1', node: 'h1' },
      { expectedTaskState: ['scheduling', null] },
    );
    expect(ok.kind).toBe('updated');
    // A redelivered message expecting the old state changes nothing and says why.
    const stale = await updateInstance(
      db.pool,
      instance.uuid,
      { taskState: 'spawning', host: 'h9' },
      { expectedTaskState: ['scheduling'] },
    );
    expect(stale).toMatchObject({ kind: 'unexpected_task_state', instance: { taskState: 'spawning', host: 'h1' } });
    const active = await updateInstance(
      db.pool,
      instance.uuid,
      { vmState: 'active', taskState: null, launchedAt: new Date() },
      { expectedTaskState: ['spawning'], expectedVmState: ['building'] },
    );
    expect(active).toMatchObject({ kind: 'updated', instance: { vmState: 'active', taskState: null } });
    expect(await updateInstance(db.pool, instance.uuid, { vmState: 'error' }, { expectedVmState: ['building'] })).toMatchObject({
      kind: 'unexpected_vm_state',
      instance: { vmState: 'active' },
    });
    // null in expectedTaskState matches "no task".
    expect((await updateInstance(db.pool, instance.uuid, { taskState: 'deleting' }, { expectedTaskState: [null] })).kind).toBe('updated');
    expect(await updateInstance(db.pool, randomUUID(), { taskState: null })).toEqual({ kind: 'not_found' });
  });

  it('only one of two racing guarded updates wins', async () => {
    const { instance } = await createInstance(db.pool, newInstance({ taskState: 'spawning' }));
    const results = await Promise.all(
      ['h1', 'h2'].map((host) =>
        updateInstance(db.pool, instance.uuid, { vmState: 'active', taskState: null, host }, { expectedTaskState: ['spawning'] }),
      ),
    );
    expect(results.map((r) => r.kind).sort()).toEqual(['unexpected_task_state', 'updated']);
  });

  it('tracks build attempts and the remaining alternates', async () => {
    const { instance } = await createInstance(db.pool, newInstance({ taskState: 'spawning', buildHostList: [alt('h2'), alt('h3')] }));
    const r = await updateInstance(
      db.pool,
      instance.uuid,
      { buildAttempt: 2, buildHostList: instance.buildHostList.slice(1), host: 'h2', buildDeadlineAt: new Date(Date.now() - 1000) },
      { expectedTaskState: ['spawning'] },
    );
    expect(r.kind === 'updated' && r.instance.buildHostList.map((s) => s.serviceHost)).toEqual(['h3']);
    expect(r.kind === 'updated' && r.instance.buildAttempt).toBe(2);
    expect((await listInstancesPastBuildDeadline(db.pool)).map((i) => i.uuid)).toContain(instance.uuid);
    await expect(updateInstance(db.pool, instance.uuid, { buildAttempt: 0 })).rejects.toMatchObject({ code: 'cell_db.instance.invalid' });
    await updateInstance(db.pool, instance.uuid, { vmState: 'active', taskState: null, buildDeadlineAt: null });
    expect((await listInstancesPastBuildDeadline(db.pool)).map((i) => i.uuid)).not.toContain(instance.uuid);
  });

  it('lists newest first with filters; soft delete hides, destroy removes everything', async () => {
    const project = `p-${randomUUID()}`;
    const a = (await createInstance(db.pool, newInstance({ projectId: project, host: 'ha' }))).instance;
    const b = (await createInstance(db.pool, newInstance({ projectId: project, host: 'hb', vmState: 'error', displayName: 'web7-b' })))
      .instance;
    expect((await listInstances(db.pool, { projectId: project })).map((i) => i.uuid)).toEqual([b.uuid, a.uuid]);
    expect((await listInstances(db.pool, { projectId: project, vmStates: ['error'] })).map((i) => i.uuid)).toEqual([b.uuid]);
    expect((await listInstances(db.pool, { host: 'ha', projectId: project })).map((i) => i.uuid)).toEqual([a.uuid]);
    expect((await listInstances(db.pool, { uuids: [a.uuid], limit: 1 })).map((i) => i.uuid)).toEqual([a.uuid]);
    expect(await softDeleteInstance(db.pool, a.uuid)).toBe(true);
    expect(await softDeleteInstance(db.pool, a.uuid)).toBe(false);
    expect(await getInstance(db.pool, a.uuid)).toBeUndefined();
    expect(await getInstance(db.pool, a.uuid, { includeDeleted: true })).toMatchObject({ vmState: 'deleted', taskState: null });
    expect(await updateInstance(db.pool, a.uuid, { taskState: null })).toEqual({ kind: 'not_found' });
    expect((await listInstances(db.pool, { projectId: project, includeDeleted: true })).length).toBe(2);
    const named = (re: string): Promise<string[]> =>
      listInstances(db.pool, { projectId: project, displayNameRegex: re, includeDeleted: true }).then((l) => l.map((i) => i.uuid));
    expect(await named('web[[:digit:]]')).toEqual([b.uuid]); // PostgreSQL's regex (a POSIX class), anywhere in the name
    expect(await named('^vm$')).toEqual([a.uuid]);
    expect(await named('^b')).toEqual([]);
    await expect(named('(')).rejects.toMatchObject({ code: '2201B' });
    await addInstanceFault(db.pool, { instanceUuid: b.uuid, code: 500, message: 'boom' });
    expect(await destroyInstance(db.pool, b.uuid)).toBe(true);
    expect(await destroyInstance(db.pool, b.uuid)).toBe(false);
    expect(await listInstanceFaults(db.pool, b.uuid)).toEqual([]);
  });
});

describe('listInstanceHoldings (the allocation audit)', () => {
  it('reads who holds an instance, where and in which state: by uuid (deleted too when asked) or by state, live only', async () => {
    const a = (await createInstance(db.pool, newInstance({ host: 'ha', node: 'na', vmState: 'active', taskState: null }))).instance;
    const b = (await createInstance(db.pool, newInstance({ host: 'hb', vmState: 'building' }))).instance;
    const c = (await createInstance(db.pool, newInstance({ host: 'hc', vmState: 'active', taskState: null }))).instance;
    await softDeleteInstance(db.pool, c.uuid);
    const byUuid = await listInstanceHoldings(db.pool, { uuids: [a.uuid, b.uuid, c.uuid] });
    expect(byUuid.map((i) => i.uuid).sort()).toEqual([a.uuid, b.uuid].sort());
    expect(byUuid.find((i) => i.uuid === a.uuid)).toEqual({
      uuid: a.uuid,
      projectId: a.projectId,
      userId: a.userId,
      vmState: 'active',
      host: 'ha',
      node: 'na',
      deletedAt: null,
    });
    const withDeleted = await listInstanceHoldings(db.pool, { uuids: [c.uuid], includeDeleted: true });
    expect(withDeleted.map((i) => [i.uuid, i.vmState, i.deletedAt instanceof Date])).toEqual([[c.uuid, 'deleted', true]]);
    const building = (await listInstanceHoldings(db.pool, { vmStates: ['building'] })).map((i) => i.uuid);
    expect(building).toContain(b.uuid);
    expect(building).not.toContain(a.uuid);
    await expect(listInstanceHoldings(db.pool, { uuids: ['nope'] })).rejects.toMatchObject({ code: 'cell_db.invalid_uuid' });
  });
});

describe('instance faults', () => {
  it('newest first, latest per instance, truncated message, in one transaction with the state change', async () => {
    const { instance } = await createInstance(db.pool, newInstance({ taskState: 'spawning' }));
    await withTransaction(db.pool, async (c) => {
      const r = await updateInstance(c, instance.uuid, { vmState: 'error', taskState: null }, { expectedTaskState: ['spawning'] });
      if (r.kind === 'updated') await addInstanceFault(c, { instanceUuid: instance.uuid, code: 500, message: 'first', host: 'h1' });
    });
    await addInstanceFault(db.pool, { instanceUuid: instance.uuid, code: 500, message: 'x'.repeat(300), details: 'trace' });
    const faults = await listInstanceFaults(db.pool, instance.uuid);
    expect(faults.map((f) => f.message.length)).toEqual([255, 5]);
    expect(faults[1]).toMatchObject({ code: 500, message: 'first', host: 'h1' });
    const latest = await getLatestInstanceFaults(db.pool, [instance.uuid, randomUUID()]);
    expect([...latest.keys()]).toEqual([instance.uuid]);
    expect(latest.get(instance.uuid)?.details).toBe('trace');
    await expect(addInstanceFault(db.pool, { instanceUuid: instance.uuid, code: 500, message: '' })).rejects.toMatchObject({
      code: 'cell_db.instance_fault.invalid',
    });
    await expect(addInstanceFault(db.pool, { instanceUuid: randomUUID(), code: 500, message: 'm' })).rejects.toMatchObject({
      code: '23503',
    });
  });
});

describe('build-attempt and host guards (beyond Nova)', () => {
  it('of the compute-failure retry and the watchdog, exactly one moves the build on', async () => {
    const { instance } = await createInstance(
      db.pool,
      newInstance({ taskState: 'spawning', host: 'h1', buildHostList: [alt('h2'), alt('h3')] }),
    );
    const next = { buildAttempt: 2, host: 'h2', buildHostList: instance.buildHostList.slice(1) };
    const both = await Promise.all(
      [0, 1].map(() => updateInstance(db.pool, instance.uuid, next, { expectedBuildAttempt: 1, expectedHost: 'h1' })),
    );
    expect(both.map((r) => r.kind).sort()).toEqual(['unexpected_build_attempt', 'updated']);
    // A late failure report from h1 no longer matches the host.
    expect(await updateInstance(db.pool, instance.uuid, { vmState: 'error' }, { expectedHost: 'h1' })).toMatchObject({
      kind: 'unexpected_host',
      instance: { host: 'h2', buildAttempt: 2 },
    });
    expect((await updateInstance(db.pool, instance.uuid, { host: null }, { expectedHost: 'h2', expectedBuildAttempt: 2 })).kind).toBe(
      'updated',
    );
    expect((await updateInstance(db.pool, instance.uuid, { host: 'h3' }, { expectedHost: null })).kind).toBe('updated');
  });
});
