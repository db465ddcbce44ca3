import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  API_DB_MIGRATIONS_DIR,
  createBuildRequest,
  createCellMapping,
  createInstanceGroup,
  createServerRecords,
  DEFAULT_IMAGE_ID,
  deleteBuildRequest,
  deleteRequestSpec,
  getBuildRequest,
  getFlavorAndImage,
  getFlavorByFlavorId,
  getImage,
  getInstanceGroup,
  getInstanceMappingsWithBuildRequests,
  getRequestSpec,
  mapToCellAndDeleteBuildRequest,
  mapToCellsAndDeleteBuildRequests,
  instancesWithBuildRequest,
  listBuildRequests,
  saveRequestSpec,
  toImageMeta,
  toWireFlavor,
} from '@cellsched/api-db';
import { Instance, RequestSpec, VmState } from '@cellsched/wire';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'apidb_build', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

async function tiny() {
  const f = await getFlavorByFlavorId(db.pool, '1');
  if (f === undefined) throw new Error('m1.tiny missing');
  return toWireFlavor(f);
}

describe('build requests', () => {
  it('round-trip the wire Instance, are idempotent, and delete reports whether it existed', async () => {
    const uuid = randomUUID();
    const instance = Instance.fromPartial({
      uuid,
      projectId: 'p1',
      userId: 'u1',
      displayName: 'vm',
      flavor: await tiny(),
      vmState: VmState.VM_STATE_BUILDING,
      taskState: 'scheduling',
      createdAt: new Date('2026-01-02T03:04:05.678Z'),
      launchIndex: 1,
      reservationId: 'r-1',
    });
    expect(await createBuildRequest(db.pool, instance)).toBe(true);
    expect(await createBuildRequest(db.pool, { ...instance, displayName: 'changed' })).toBe(false);
    const got = await getBuildRequest(db.pool, uuid);
    expect(got?.instance).toEqual(instance);
    expect(got?.projectId).toBe('p1');
    expect((await listBuildRequests(db.pool, { projectId: 'p1' })).map((b) => b.instanceUuid)).toEqual([uuid]);
    expect(await listBuildRequests(db.pool, { projectId: 'p2' })).toEqual([]);
    expect(
      (await listBuildRequests(db.pool, { projectId: 'p1', displayNameRegex: instance.displayName.slice(1, 3) })).map(
        (b) => b.instanceUuid,
      ),
    ).toEqual([uuid]);
    expect(await listBuildRequests(db.pool, { projectId: 'p1', displayNameRegex: `^${instance.displayName}x` })).toEqual([]);
    await expect(listBuildRequests(db.pool, { displayNameRegex: '[' })).rejects.toMatchObject({ code: '2201B' });
    // The user's delete and the super-conductor race: exactly one sees true.
    const results = await Promise.all([deleteBuildRequest(db.pool, uuid), deleteBuildRequest(db.pool, uuid)]);
    expect(results.sort()).toEqual([false, true]);
    expect(await getBuildRequest(db.pool, uuid)).toBeUndefined();
  });

  it('tell which instances still have one (the placement audit: a claim whose instance is not in a cell yet)', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await createBuildRequest(
      db.pool,
      Instance.fromPartial({ uuid: a, projectId: 'p4', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING }),
    );
    expect(await instancesWithBuildRequest(db.pool, [a, b])).toEqual(new Set([a]));
    expect(await instancesWithBuildRequest(db.pool, [])).toEqual(new Set());
    await expect(instancesWithBuildRequest(db.pool, ['x'])).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
  });

  it("keep the create's traceparent for a re-cast, and refuse one that is not a W3C traceparent (nothing written)", async () => {
    const traced = Instance.fromPartial({ uuid: randomUUID(), projectId: 'p3', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING });
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(await createBuildRequest(db.pool, traced, tp)).toBe(true);
    expect((await getBuildRequest(db.pool, traced.uuid))?.traceParent).toBe(tp);
    const untraced = Instance.fromPartial({
      uuid: randomUUID(),
      projectId: 'p3',
      flavor: await tiny(),
      vmState: VmState.VM_STATE_BUILDING,
    });
    expect(await createBuildRequest(db.pool, untraced)).toBe(true);
    expect((await listBuildRequests(db.pool, { projectId: 'p3' })).map((b) => b.traceParent)).toEqual([tp, undefined]);
    const bad = Instance.fromPartial({ uuid: randomUUID(), projectId: 'p3', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING });
    await expect(createBuildRequest(db.pool, bad, 'not-a-traceparent')).rejects.toMatchObject({ code: 'api_db.build_request.invalid' });
    expect(await getBuildRequest(db.pool, bad.uuid)).toBeUndefined();
  });

  it('refuse an instance without uuid or project', async () => {
    await expect(createBuildRequest(db.pool, Instance.fromPartial({ uuid: 'x', projectId: 'p' }))).rejects.toMatchObject({
      code: 'api_db.invalid_uuid',
    });
    await expect(createBuildRequest(db.pool, Instance.fromPartial({ uuid: randomUUID() }))).rejects.toMatchObject({
      code: 'api_db.build_request.invalid',
    });
  });
});

describe('request specs', () => {
  it('round-trip the wire RequestSpec (JSON) and save replaces', async () => {
    const uuid = randomUUID();
    const image = await getImage(db.pool, '155d900f-4e14-4e4c-a73d-069cbf4541e6');
    if (image === undefined) throw new Error('seed image missing');
    const spec = RequestSpec.fromPartial({
      instanceUuid: uuid,
      projectId: 'p',
      userId: 'u',
      flavor: await tiny(),
      image: toImageMeta(image),
      numInstances: 2,
      availabilityZone: 'az1',
      instanceGroup: { uuid: randomUUID(), policy: 'anti-affinity', hosts: [], members: [], maxServerPerHost: 2 },
      schedulerHints: { group: 'g' },
      ignoreHosts: ['h9'],
      seed: 42,
      requestId: 'req-1',
    });
    expect(await saveRequestSpec(db.pool, spec)).toBe(true);
    expect(await getRequestSpec(db.pool, uuid)).toEqual(spec);
    const stored = await db.pool.query<{ spec: { instanceUuid: string } }>('SELECT spec FROM request_specs WHERE instance_uuid = $1', [
      uuid,
    ]);
    expect(stored.rows[0]?.spec.instanceUuid).toBe(uuid);
    expect(await saveRequestSpec(db.pool, { ...spec, ignoreHosts: ['h1', 'h2'] })).toBe(false);
    expect((await getRequestSpec(db.pool, uuid))?.ignoreHosts).toEqual(['h1', 'h2']);
    expect(await deleteRequestSpec(db.pool, uuid)).toBe(true);
    expect(await deleteRequestSpec(db.pool, uuid)).toBe(false);
    expect(await getRequestSpec(db.pool, uuid)).toBeUndefined();
  });

  it('refuses a spec without flavor', async () => {
    await expect(saveRequestSpec(db.pool, RequestSpec.fromPartial({ instanceUuid: randomUUID() }))).rejects.toMatchObject({
      code: 'api_db.request_spec.invalid',
    });
  });
});

describe("a create's records in one statement (createServerRecords) and step 4 (mapToCellAndDeleteBuildRequest)", () => {
  const server = async (projectId: string, name: string) => {
    const uuid = randomUUID();
    const flavor = await tiny();
    return {
      spec: RequestSpec.fromPartial({ instanceUuid: uuid, projectId, userId: 'u1', flavor, numInstances: 2, requestId: 'req-1' }),
      instance: Instance.fromPartial({
        uuid,
        projectId,
        userId: 'u1',
        displayName: name,
        flavor,
        vmState: VmState.VM_STATE_BUILDING,
        taskState: 'scheduling',
        launchIndex: 0,
      }),
    };
  };
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it("writes each server's spec, build request, mapping without a cell and group membership; a repeat changes nothing", async () => {
    const { group } = await createInstanceGroup(db.pool, { name: 'g', policy: 'anti-affinity', projectId: 'p5', userId: 'u1' });
    const servers = [await server('p5', 'a'), await server('p5', 'b')];
    const ids = servers.map((s) => s.instance.uuid);
    await createServerRecords(db.pool, servers, { projectId: 'p5', userId: 'u1', traceParent: tp, groupUuid: group.uuid });
    await createServerRecords(db.pool, servers, { projectId: 'p5', userId: 'u1', traceParent: tp, groupUuid: group.uuid });
    expect(
      (await listBuildRequests(db.pool, { projectId: 'p5' })).map((b) => [b.instanceUuid, b.instance.displayName, b.traceParent]),
    ).toEqual([
      [ids[0], 'a', tp],
      [ids[1], 'b', tp],
    ]);
    expect((await getRequestSpec(db.pool, ids[1] ?? ''))?.instanceUuid).toBe(ids[1]);
    const rows = await getInstanceMappingsWithBuildRequests(db.pool, ids);
    expect(
      rows.map((r) => [
        r.mapping.instanceUuid,
        r.mapping.projectId,
        r.mapping.userId,
        r.mapping.cell,
        r.buildRequest?.instance.displayName,
      ]),
    ).toEqual([
      [ids[0], 'p5', 'u1', undefined, 'a'],
      [ids[1], 'p5', 'u1', undefined, 'b'],
    ]);
    expect([...((await getInstanceGroup(db.pool, group.uuid))?.members ?? [])].sort()).toEqual([...ids].sort());
  });

  it('refuses bad input and writes nothing', async () => {
    const s = await server('p6', 'x');
    await expect(createServerRecords(db.pool, [s], { projectId: 'p6', traceParent: 'nope' })).rejects.toMatchObject({
      code: 'api_db.build_request.invalid',
    });
    await expect(createServerRecords(db.pool, [s], { projectId: 'other' })).rejects.toMatchObject({ code: 'api_db.build_request.invalid' });
    await expect(
      createServerRecords(db.pool, [{ ...s, instance: { ...s.instance, uuid: 'bad' } }], { projectId: 'p6' }),
    ).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
    expect(await getInstanceMappingsWithBuildRequests(db.pool, [s.instance.uuid])).toEqual([]);
    expect(await getRequestSpec(db.pool, s.instance.uuid)).toBeUndefined();
  });

  it('several instances in one statement: each mapped, each answered whether it still had its build request (a repeat: once)', async () => {
    const { cell } = await createCellMapping(db.pool, {
      name: `c-${randomUUID().slice(0, 6)}`,
      transportUrl: 'rabbit://x',
      databaseConnection: 'postgres://x/y',
    });
    const [a, b, c] = [await server('p8', 'a'), await server('p8', 'b'), await server('p8', 'c')];
    await createServerRecords(db.pool, [a, b, c], { projectId: 'p8' });
    await deleteBuildRequest(db.pool, b.instance.uuid); // the user deleted b meanwhile
    const ids = [a, b, c].map((s) => s.instance.uuid);
    expect(
      await mapToCellsAndDeleteBuildRequests(db.pool, [
        { instanceUuid: ids[0] ?? '', cellId: cell.id },
        { instanceUuid: ids[1] ?? '', cellId: cell.id },
        { instanceUuid: (ids[2] ?? '').toUpperCase(), cellId: cell.id },
        { instanceUuid: ids[2] ?? '', cellId: cell.id },
      ]),
    ).toEqual([true, false, true, false]);
    const rows = await getInstanceMappingsWithBuildRequests(db.pool, ids);
    expect(rows.map((r) => [r.mapping.instanceUuid, r.mapping.cell?.uuid, r.buildRequest])).toEqual(
      ids.map((u) => [u, cell.uuid, undefined]),
    );
    expect(await mapToCellsAndDeleteBuildRequests(db.pool, [])).toEqual([]);
    await expect(mapToCellsAndDeleteBuildRequests(db.pool, [{ instanceUuid: 'bad', cellId: cell.id }])).rejects.toMatchObject({
      code: 'api_db.invalid_uuid',
    });
  });

  it('maps to the cell and deletes the build request at once; only the first caller deletes it', async () => {
    const { cell } = await createCellMapping(db.pool, {
      name: `c-${randomUUID().slice(0, 6)}`,
      transportUrl: 'rabbit://x',
      databaseConnection: 'postgres://x/y',
    });
    const s = await server('p7', 'y');
    await createServerRecords(db.pool, [s], { projectId: 'p7' });
    expect(await mapToCellAndDeleteBuildRequest(db.pool, s.instance.uuid, cell.id)).toBe(true);
    expect(await mapToCellAndDeleteBuildRequest(db.pool, s.instance.uuid, cell.id)).toBe(false);
    const [row] = await getInstanceMappingsWithBuildRequests(db.pool, [s.instance.uuid]);
    expect([row?.mapping.cell?.uuid, row?.buildRequest]).toEqual([cell.uuid, undefined]);
  });

  it('reads a flavor and an image in one round trip, each absent when unknown', async () => {
    const both = await getFlavorAndImage(db.pool, '1', DEFAULT_IMAGE_ID);
    expect(both.flavor).toEqual(await getFlavorByFlavorId(db.pool, '1'));
    expect(both.image).toEqual(await getImage(db.pool, DEFAULT_IMAGE_ID));
    expect(await getFlavorAndImage(db.pool, 'nope', 'not-a-uuid')).toEqual({ flavor: undefined, flavorAccess: [], image: undefined });
    expect((await getFlavorAndImage(db.pool, 'nope', DEFAULT_IMAGE_ID)).image?.id).toBe(DEFAULT_IMAGE_ID);
    expect((await getFlavorAndImage(db.pool, '1', randomUUID())).image).toBeUndefined();
  });
});
