import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  createMigration,
  findMigrations,
  getMigration,
  listInstances,
  listMigrations,
  listMigrationsByFilters,
  updateMigrationStatus,
  vmStateFromWire,
  vmStateToWire,
} from '@cellsched/cell-db';
import { VmState } from '@cellsched/wire';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'celldb_more', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

const flavor = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };

describe('createInstance under concurrent redelivery', () => {
  it('five concurrent creates of one uuid: exactly one is new, all see the same row', async () => {
    const uuid = randomUUID();
    const results = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        createInstance(db.pool, { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building', host: `h${i}` }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.instance.host)).size).toBe(1);
  });
});

describe('listInstances key-set pagination', () => {
  it('pages through newest first without gaps or repeats', async () => {
    const project = `page-${randomUUID()}`;
    for (let i = 0; i < 7; i++)
      await createInstance(db.pool, { uuid: randomUUID(), projectId: project, userId: 'u', flavor, vmState: 'active' });
    const all = await listInstances(db.pool, { projectId: project });
    const seen: string[] = [];
    let after: { createdAt: Date; uuid: string } | undefined;
    for (;;) {
      const page = await listInstances(db.pool, { projectId: project, limit: 3, after });
      if (page.length === 0) break;
      seen.push(...page.map((i) => i.uuid));
      const last = page[page.length - 1];
      if (last === undefined) break;
      after = { createdAt: last.createdAt, uuid: last.uuid };
    }
    expect(seen).toEqual(all.map((i) => i.uuid));
    expect(seen).toHaveLength(7);
  });

  it('stores created_at to the millisecond, so a marker that travels as a Date is exact: rows of one millisecond page by uuid without gaps', async () => {
    const project = `ms-${randomUUID()}`;
    const uuids: string[] = [];
    for (let i = 0; i < 5; i++)
      uuids.push(
        (await createInstance(db.pool, { uuid: randomUUID(), projectId: project, userId: 'u', flavor, vmState: 'active' })).instance.uuid,
      );
    await db.pool.query("UPDATE instances SET created_at = '2026-01-01T00:00:00.123Z' WHERE project_id = $1", [project]);
    await expect(
      db.pool.query("UPDATE instances SET created_at = '2026-01-01T00:00:00.123456Z' WHERE project_id = $1", [project]),
    ).rejects.toMatchObject({ code: '23514' });
    const seen: string[] = [];
    let after: { createdAt: Date; uuid: string } | undefined;
    for (
      let page = await listInstances(db.pool, { projectId: project, limit: 1 });
      page.length > 0;
      page = await listInstances(db.pool, { projectId: project, limit: 1, after })
    ) {
      const last = page[0] as (typeof page)[0];
      seen.push(last.uuid);
      after = { createdAt: last.createdAt, uuid: last.uuid };
    }
    expect(seen).toEqual([...uuids].sort().reverse());
    await expect(listInstances(db.pool, { limit: -1 })).rejects.toMatchObject({ code: 'cell_db.instance.invalid' });
  });
});

describe('migration records', () => {
  it('are created idempotently and move status only from an expected one', async () => {
    const instanceUuid = randomUUID();
    const uuid = randomUUID();
    const first = await createMigration(db.pool, {
      uuid,
      instanceUuid,
      migrationType: 'resize',
      status: 'pre-migrating',
      sourceCompute: 'h1',
      sourceNode: 'h1',
    });
    expect(first.created).toBe(true);
    expect((await createMigration(db.pool, { uuid, instanceUuid, migrationType: 'resize', status: 'error' })).created).toBe(false);
    expect((await updateMigrationStatus(db.pool, uuid, 'migrating', ['pre-migrating']))?.status).toBe('migrating');
    expect(await updateMigrationStatus(db.pool, uuid, 'finished', ['pre-migrating'])).toBeUndefined();
    expect((await getMigration(db.pool, uuid))?.status).toBe('migrating');
    expect((await listMigrations(db.pool, instanceUuid)).map((m) => m.uuid)).toEqual([uuid]);
    await expect(createMigration(db.pool, { instanceUuid, migrationType: 'teleport' as never, status: 'x' })).rejects.toMatchObject({
      code: '23514',
    });
  });

  it('are found by their own uuid (a move consumer) or by their instance', async () => {
    const [i1, i2] = [randomUUID(), randomUUID()];
    const m1 = (await createMigration(db.pool, { instanceUuid: i1, migrationType: 'migration', status: 'migrating' })).migration;
    const m2 = (await createMigration(db.pool, { instanceUuid: i2, migrationType: 'resize', status: 'confirmed' })).migration;
    await createMigration(db.pool, { instanceUuid: randomUUID(), migrationType: 'evacuation', status: 'done' });
    expect((await findMigrations(db.pool, { uuids: [m1.uuid] })).map((m) => m.uuid)).toEqual([m1.uuid]);
    expect((await findMigrations(db.pool, { instanceUuids: [i2] })).map((m) => m.uuid)).toEqual([m2.uuid]);
    expect((await findMigrations(db.pool, { uuids: [m2.uuid], instanceUuids: [i1] })).map((m) => m.uuid)).toEqual([m1.uuid, m2.uuid]);
    expect(await findMigrations(db.pool, {})).toEqual([]);
    await expect(findMigrations(db.pool, { uuids: ['nope'] })).rejects.toMatchObject({ code: 'cell_db.invalid_uuid' });
  });
});

describe('vm states', () => {
  it('map between Nova strings and the wire enum', () => {
    expect(vmStateToWire('building')).toBe(VmState.VM_STATE_BUILDING);
    expect(vmStateToWire('paused')).toBe(VmState.VM_STATE_UNSPECIFIED);
    expect(vmStateFromWire(VmState.VM_STATE_SHELVED_OFFLOADED)).toBe('shelved_offloaded');
    expect(() => vmStateFromWire(VmState.VM_STATE_UNSPECIFIED)).toThrow(TypeError);
  });
});

describe('listMigrationsByFilters', () => {
  it('filters as Nova (host is source or dest; source_compute only without host), newest first, pages after a marker', async () => {
    const instanceUuid = randomUUID();
    const tag = `f-${randomUUID().slice(0, 8)}`;
    const made = [];
    for (const [src, dst, status] of [
      [`${tag}-a`, `${tag}-b`, 'finished'],
      [`${tag}-b`, `${tag}-c`, 'running'],
      [`${tag}-c`, `${tag}-a`, 'done'],
    ] as [string, string, string][]) {
      made.push(
        (
          await createMigration(db.pool, {
            instanceUuid,
            migrationType: 'live-migration',
            status,
            sourceCompute: src,
            destCompute: dst,
            userId: 'u',
            projectId: 'p',
          })
        ).migration,
      );
    }
    const ids = (ms: { uuid: string }[]): string[] => ms.map((m) => m.uuid);
    const all = await listMigrationsByFilters(db.pool, { instanceUuid });
    expect(ids(all)).toEqual(ids([...made].reverse()));
    expect(all[0]).toMatchObject({ id: expect.any(Number), userId: 'u', projectId: 'p', destHost: null });
    expect(ids(await listMigrationsByFilters(db.pool, { host: `${tag}-a` }))).toEqual([made[2]?.uuid, made[0]?.uuid]);
    expect(ids(await listMigrationsByFilters(db.pool, { sourceCompute: `${tag}-a` }))).toEqual([made[0]?.uuid]);
    expect(ids(await listMigrationsByFilters(db.pool, { host: `${tag}-c`, sourceCompute: `${tag}-a` }))).toEqual([
      made[2]?.uuid,
      made[1]?.uuid,
    ]);
    expect(ids(await listMigrationsByFilters(db.pool, { instanceUuid, statuses: ['running', 'done'] }))).toEqual([
      made[2]?.uuid,
      made[1]?.uuid,
    ]);
    expect(await listMigrationsByFilters(db.pool, { instanceUuid, migrationType: 'resize' })).toEqual([]);
    expect(await listMigrationsByFilters(db.pool, { instanceUuid: 'not-a-uuid' })).toEqual([]);
    const marker = all[0];
    if (marker === undefined) throw new Error('no migration');
    const page = await listMigrationsByFilters(db.pool, {
      instanceUuid,
      after: { createdAt: marker.createdAt, id: marker.id, uuid: marker.uuid },
      limit: 1,
    });
    expect(ids(page)).toEqual([made[1]?.uuid]);
    expect(await listMigrationsByFilters(db.pool, { instanceUuid, changesSince: new Date(Date.now() + 60_000) })).toEqual([]);
  });
});
