// Migration 006 (issue 13): the instance's old/new flavor, the action-in-progress rows
// (instance_tasks) with their step guard, and the migration queries of the move flows.
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  advanceInstanceTask,
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  createInstanceTask,
  createMigration,
  endInstanceTask,
  getInstance,
  getInstanceTask,
  listEvacuationsAwaitingSource,
  listMigrationsOfDeletedInstances,
  listOverdueInstanceTasks,
  listUnconfirmedResizes,
  softDeleteInstance,
  updateInstance,
  updateMigration,
  upsertService,
} from '@cellsched/cell-db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'celldb_moves', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

const small = { id: 0, flavorid: '1', name: 'm1.small', vcpus: 1, memoryMb: 2048, rootGb: 20, ephemeralGb: 0, swap: 0, extraSpecs: {} };
const medium = {
  id: 0,
  flavorid: '2',
  name: 'm1.medium',
  vcpus: 2,
  memoryMb: 4096,
  rootGb: 40,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: { 'hw:x': 'y' },
};

async function instance(o: { host?: string; vmState?: 'active' | 'resized' } = {}): Promise<string> {
  const uuid = randomUUID();
  await createInstance(db.pool, {
    uuid,
    projectId: 'p',
    userId: 'u',
    flavor: small,
    vmState: o.vmState ?? 'active',
    host: o.host ?? 'h1',
    node: o.host ?? 'h1',
  });
  return uuid;
}

const task = (uuid: string, o: Partial<Parameters<typeof createInstanceTask>[1]> = {}): Parameters<typeof createInstanceTask>[1] => ({
  instanceUuid: uuid,
  requestId: 'req-1',
  action: 'resize',
  step: 'prep_resize',
  stepHost: 'h2',
  deadlineAt: new Date(Date.now() + 60_000),
  priorVmState: 'active',
  ...o,
});

describe('old and new flavor (Nova instance_extra)', () => {
  it('round-trip, and null clears them; flavor is replaced whole', async () => {
    const uuid = await instance();
    expect(await getInstance(db.pool, uuid)).toMatchObject({ oldFlavor: undefined, newFlavor: undefined });
    await updateInstance(db.pool, uuid, { oldFlavor: small, newFlavor: medium });
    expect(await getInstance(db.pool, uuid)).toMatchObject({ oldFlavor: small, newFlavor: medium, flavor: small });
    await updateInstance(db.pool, uuid, { flavor: medium, imageRef: 'img-2' });
    expect(await getInstance(db.pool, uuid)).toMatchObject({ flavor: medium, imageRef: 'img-2' });
    await updateInstance(db.pool, uuid, { oldFlavor: null, newFlavor: null });
    expect(await getInstance(db.pool, uuid)).toMatchObject({ oldFlavor: undefined, newFlavor: undefined, flavor: medium });
  });
});

describe('instance_tasks', () => {
  it('create is idempotent per instance: a repeat or another request sees the existing row', async () => {
    const uuid = await instance();
    const first = await createInstanceTask(db.pool, task(uuid, { params: { reboot_type: 'HARD' } }));
    expect(first).toMatchObject({
      created: true,
      task: { requestId: 'req-1', step: 'prep_resize', attempt: 1, enteredBy: 'action', params: { reboot_type: 'HARD' }, failure: null },
    });
    expect(await createInstanceTask(db.pool, task(uuid))).toMatchObject({ created: false, task: { requestId: 'req-1' } });
    expect(await createInstanceTask(db.pool, task(uuid, { requestId: 'req-2', action: 'stop' }))).toMatchObject({
      created: false,
      task: { requestId: 'req-1', action: 'resize' },
    });
  });

  it('advance applies only at the guarded step; a repeat or a late result writes nothing', async () => {
    const uuid = await instance();
    await createInstanceTask(db.pool, task(uuid, { hostList: [] }));
    const guard = { requestId: 'req-1', step: 'prep_resize', stepHost: 'h2', attempt: 1 };
    const next = { step: 'resize_instance', stepHost: 'h1', attempt: 1, deadlineAt: new Date(), enteredBy: 'prep_resize@h2#1' };
    expect(await advanceInstanceTask(db.pool, uuid, guard, next)).toMatchObject({
      step: 'resize_instance',
      stepHost: 'h1',
      enteredBy: 'prep_resize@h2#1',
    });
    expect(await advanceInstanceTask(db.pool, uuid, guard, next)).toBeUndefined();
    expect(
      await advanceInstanceTask(db.pool, uuid, { ...guard, step: 'resize_instance', stepHost: 'h1', requestId: 'other' }, next),
    ).toBeUndefined();
    const rolled = await advanceInstanceTask(
      db.pool,
      uuid,
      { ...guard, step: 'resize_instance', stepHost: 'h1' },
      { ...next, step: 'revert_resize', stepHost: 'h2', failure: 'disk full' },
    );
    expect(rolled).toMatchObject({ step: 'revert_resize', failure: 'disk full' });
    expect(await endInstanceTask(db.pool, uuid, 'other')).toBe(false);
    expect(await endInstanceTask(db.pool, uuid, 'req-1')).toBe(true);
    expect(await getInstanceTask(db.pool, uuid)).toBeUndefined();
  });

  it('bad input is refused before anything is written', async () => {
    const uuid = await instance();
    await expect(createInstanceTask(db.pool, task(uuid, { step: '' }))).rejects.toMatchObject({ code: 'cell_db.instance_task.invalid' });
    await expect(createInstanceTask(db.pool, task(uuid, { attempt: 0 }))).rejects.toMatchObject({ code: 'cell_db.instance_task.invalid' });
    expect(await getInstanceTask(db.pool, uuid)).toBeUndefined();
  });

  it('overdue: past the deadline, or at once on a host that is gone (forced down, never registered)', async () => {
    const host = `h-${randomUUID().slice(0, 8)}`;
    const { service } = await upsertService(db.pool, { host, binary: 'nova-compute', topic: 'compute' });
    await db.pool.query('UPDATE services SET last_seen_up = now() WHERE id = $1', [service.id]);
    const [due, waiting, gone] = [await instance(), await instance(), await instance()];
    await createInstanceTask(db.pool, task(due, { stepHost: host, deadlineAt: new Date(Date.now() - 1000) }));
    await createInstanceTask(db.pool, task(waiting, { stepHost: host }));
    await createInstanceTask(db.pool, task(gone, { stepHost: `${host}-unknown` }));
    const overdue = (await listOverdueInstanceTasks(db.pool, { serviceDownTimeMs: 60_000 })).filter((t) =>
      [due, waiting, gone].includes(t.instanceUuid),
    );
    expect(overdue.map((t) => [t.instanceUuid, t.hostGone, t.hostDown]).sort()).toEqual(
      [
        [due, false, false],
        [gone, true, true],
      ].sort(),
    );
    await db.pool.query('UPDATE services SET forced_down = true WHERE id = $1', [service.id]);
    const forced = (await listOverdueInstanceTasks(db.pool, { serviceDownTimeMs: 60_000 })).filter((t) => t.instanceUuid === waiting);
    expect(forced).toMatchObject([{ hostGone: true, step: 'prep_resize', requestId: 'req-1' }]);
  });

  it('goes with its instance (hard delete)', async () => {
    const uuid = await instance();
    await createInstanceTask(db.pool, task(uuid));
    await db.pool.query('DELETE FROM instances WHERE uuid = $1', [uuid]);
    expect(await getInstanceTask(db.pool, uuid)).toBeUndefined();
  });
});

describe('migrations of the move flows', () => {
  it('updateMigration: status and destination, guarded on the status', async () => {
    const uuid = await instance();
    const { migration } = await createMigration(db.pool, {
      instanceUuid: uuid,
      migrationType: 'resize',
      status: 'pre-migrating',
      sourceCompute: 'h1',
      sourceNode: 'h1',
      userId: 'u',
      projectId: 'p',
    });
    expect(migration).toMatchObject({ userId: 'u', projectId: 'p', destCompute: null });
    expect(await updateMigration(db.pool, migration.uuid, { destCompute: 'h3', destNode: 'h3' }, ['pre-migrating'])).toMatchObject({
      destCompute: 'h3',
      status: 'pre-migrating',
    });
    expect(await updateMigration(db.pool, migration.uuid, { status: 'migrating' }, ['pre-migrating'])).toMatchObject({
      status: 'migrating',
      destCompute: 'h3',
    });
    expect(await updateMigration(db.pool, migration.uuid, { status: 'migrating' }, ['pre-migrating'])).toBeUndefined();
    expect(await updateMigration(db.pool, migration.uuid, { destCompute: null })).toMatchObject({ destCompute: null, destNode: 'h3' });
  });

  it('evacuations done by source host; unconfirmed resizes past the window; in-progress migrations of deleted instances', async () => {
    const src = `src-${randomUUID().slice(0, 8)}`;
    const evacuated = await instance({ host: 'dest' });
    const { migration: evac } = await createMigration(db.pool, {
      instanceUuid: evacuated,
      migrationType: 'evacuation',
      status: 'done',
      sourceCompute: src,
      destCompute: 'dest',
    });
    await createMigration(db.pool, { instanceUuid: evacuated, migrationType: 'evacuation', status: 'completed', sourceCompute: src });
    expect((await listEvacuationsAwaitingSource(db.pool, [src, 'other'])).map((m) => m.uuid)).toEqual([evac.uuid]);
    expect(await listEvacuationsAwaitingSource(db.pool, [])).toEqual([]);

    const resized = await instance({ vmState: 'resized' });
    const { migration: fin } = await createMigration(db.pool, { instanceUuid: resized, migrationType: 'resize', status: 'finished' });
    await db.pool.query("UPDATE migrations SET updated_at = now() - interval '1 hour' WHERE uuid = $1", [fin.uuid]);
    const mine = async (windowMs: number): Promise<string[]> =>
      (await listUnconfirmedResizes(db.pool, { windowMs })).map((m) => m.uuid).filter((u) => u === fin.uuid);
    expect(await mine(60_000)).toEqual([fin.uuid]);
    expect(await mine(7_200_000)).toEqual([]);
    await createInstanceTask(db.pool, task(resized, { action: 'confirmResize', step: 'confirm_resize' }));
    expect(await mine(60_000)).toEqual([]);

    const deleted = await instance();
    const { migration: orphan } = await createMigration(db.pool, {
      instanceUuid: deleted,
      migrationType: 'migration',
      status: 'migrating',
    });
    await createMigration(db.pool, { instanceUuid: deleted, migrationType: 'migration', status: 'error' });
    const orphans = async (): Promise<string[]> =>
      (await listMigrationsOfDeletedInstances(db.pool)).map((m) => m.uuid).filter((u) => [orphan.uuid, fin.uuid, evac.uuid].includes(u));
    expect(await orphans()).toEqual([]);
    await softDeleteInstance(db.pool, deleted);
    expect(await orphans()).toEqual([orphan.uuid]);
  });
});
