import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  API_DB_MIGRATIONS_DIR, createBuildRequest, deleteBuildRequest, deleteRequestSpec, getBuildRequest, getFlavorByFlavorId,
  getImage, getRequestSpec, instancesWithBuildRequest, listBuildRequests, saveRequestSpec, toImageMeta, toWireFlavor,
} from '@cellsched/api-db';
import { Instance, RequestSpec, VmState } from '@cellsched/wire';

let db: TestDatabase;
beforeAll(async () => { db = await createTestDatabase({ prefix: 'apidb_build', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR }); });
afterAll(async () => { await db.drop(); });

async function tiny() {
  const f = await getFlavorByFlavorId(db.pool, '1');
  if (f === undefined) throw new Error('m1.tiny missing');
  return toWireFlavor(f);
}

describe('build requests', () => {
  it('round-trip the wire Instance, are idempotent, and delete reports whether it existed', async () => {
    const uuid = randomUUID();
    const instance = Instance.fromPartial({ uuid, projectId: 'p1', userId: 'u1', displayName: 'vm', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING,
      taskState: 'scheduling', createdAt: new Date('2026-01-02T03:04:05.678Z'), launchIndex: 1, reservationId: 'r-1' });
    expect(await createBuildRequest(db.pool, instance)).toBe(true);
    expect(await createBuildRequest(db.pool, { ...instance, displayName: 'changed' })).toBe(false);
    const got = await getBuildRequest(db.pool, uuid);
    expect(got?.instance).toEqual(instance);
    expect(got?.projectId).toBe('p1');
    expect((await listBuildRequests(db.pool, { projectId: 'p1' })).map((b) => b.instanceUuid)).toEqual([uuid]);
    expect(await listBuildRequests(db.pool, { projectId: 'p2' })).toEqual([]);
    expect((await listBuildRequests(db.pool, { projectId: 'p1', displayNameRegex: instance.displayName.slice(1, 3) })).map((b) => b.instanceUuid)).toEqual([uuid]);
    expect(await listBuildRequests(db.pool, { projectId: 'p1', displayNameRegex: `^${instance.displayName}x` })).toEqual([]);
    await expect(listBuildRequests(db.pool, { displayNameRegex: '[' })).rejects.toMatchObject({ code: '2201B' });
    // The user's delete and the super-conductor race: exactly one sees true.
    const results = await Promise.all([deleteBuildRequest(db.pool, uuid), deleteBuildRequest(db.pool, uuid)]);
    expect(results.sort()).toEqual([false, true]);
    expect(await getBuildRequest(db.pool, uuid)).toBeUndefined();
  });

  it('tell which instances still have one (the placement audit: a claim whose instance is not in a cell yet)', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await createBuildRequest(db.pool, Instance.fromPartial({ uuid: a, projectId: 'p4', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING }));
    expect(await instancesWithBuildRequest(db.pool, [a, b])).toEqual(new Set([a]));
    expect(await instancesWithBuildRequest(db.pool, [])).toEqual(new Set());
    await expect(instancesWithBuildRequest(db.pool, ['x'])).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
  });

  it('keep the create\'s traceparent for a re-cast, and refuse one that is not a W3C traceparent (nothing written)', async () => {
    const traced = Instance.fromPartial({ uuid: randomUUID(), projectId: 'p3', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING });
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(await createBuildRequest(db.pool, traced, tp)).toBe(true);
    expect((await getBuildRequest(db.pool, traced.uuid))?.traceParent).toBe(tp);
    const untraced = Instance.fromPartial({ uuid: randomUUID(), projectId: 'p3', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING });
    expect(await createBuildRequest(db.pool, untraced)).toBe(true);
    expect((await listBuildRequests(db.pool, { projectId: 'p3' })).map((b) => b.traceParent)).toEqual([tp, undefined]);
    const bad = Instance.fromPartial({ uuid: randomUUID(), projectId: 'p3', flavor: await tiny(), vmState: VmState.VM_STATE_BUILDING });
    await expect(createBuildRequest(db.pool, bad, 'not-a-traceparent')).rejects.toMatchObject({ code: 'api_db.build_request.invalid' });
    expect(await getBuildRequest(db.pool, bad.uuid)).toBeUndefined();
  });

  it('refuse an instance without uuid or project', async () => {
    await expect(createBuildRequest(db.pool, Instance.fromPartial({ uuid: 'x', projectId: 'p' }))).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
    await expect(createBuildRequest(db.pool, Instance.fromPartial({ uuid: randomUUID() }))).rejects.toMatchObject({ code: 'api_db.build_request.invalid' });
  });
});

describe('request specs', () => {
  it('round-trip the wire RequestSpec (JSON) and save replaces', async () => {
    const uuid = randomUUID();
    const image = await getImage(db.pool, '155d900f-4e14-4e4c-a73d-069cbf4541e6');
    if (image === undefined) throw new Error('seed image missing');
    const spec = RequestSpec.fromPartial({
      instanceUuid: uuid, projectId: 'p', userId: 'u', flavor: await tiny(), image: toImageMeta(image), numInstances: 2, availabilityZone: 'az1',
      instanceGroup: { uuid: randomUUID(), policy: 'anti-affinity', hosts: [], members: [], maxServerPerHost: 2 },
      schedulerHints: { group: 'g' }, ignoreHosts: ['h9'], seed: 42, requestId: 'req-1',
    });
    expect(await saveRequestSpec(db.pool, spec)).toBe(true);
    expect(await getRequestSpec(db.pool, uuid)).toEqual(spec);
    const stored = await db.pool.query<{ spec: { instanceUuid: string } }>('SELECT spec FROM request_specs WHERE instance_uuid = $1', [uuid]);
    expect(stored.rows[0]?.spec.instanceUuid).toBe(uuid);
    expect(await saveRequestSpec(db.pool, { ...spec, ignoreHosts: ['h1', 'h2'] })).toBe(false);
    expect((await getRequestSpec(db.pool, uuid))?.ignoreHosts).toEqual(['h1', 'h2']);
    expect(await deleteRequestSpec(db.pool, uuid)).toBe(true);
    expect(await deleteRequestSpec(db.pool, uuid)).toBe(false);
    expect(await getRequestSpec(db.pool, uuid)).toBeUndefined();
  });

  it('refuses a spec without flavor', async () => {
    await expect(saveRequestSpec(db.pool, RequestSpec.fromPartial({ instanceUuid: randomUUID() }))).rejects.toMatchObject({ code: 'api_db.request_spec.invalid' });
  });
});
