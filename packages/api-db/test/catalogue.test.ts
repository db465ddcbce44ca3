import { randomUUID } from 'node:crypto';
import { createTestDatabase, withTransaction, type TestDatabase } from '@cellsched/db';
import { Client } from 'pg';
import {
  addAggregateHost,
  addFlavorAccess,
  API_DB_MIGRATIONS_DIR,
  CATALOGUE_CHANNEL,
  createAggregate,
  createFlavor,
  createImage,
  deleteAggregate,
  deleteFlavor,
  deleteFlavorExtraSpec,
  deleteImage,
  getAggregate,
  getAggregateById,
  getFlavorAndImage,
  getFlavorByFlavorId,
  getFlavorByName,
  getImage,
  listAggregates,
  listFlavorAccess,
  listFlavors,
  listImages,
  lockAggregates,
  removeAggregateHost,
  removeFlavorAccess,
  renameAggregate,
  setAggregateMetadata,
  setFlavorDescription,
  setFlavorExtraSpecs,
  toWireFlavor,
} from '@cellsched/api-db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'apidb_cat', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

describe('flavors', () => {
  it('create with extra specs, refuse duplicates, set/unset specs, private access, delete', async () => {
    const f = await createFlavor(db.pool, {
      name: 'gpu.big',
      flavorid: 'gpu-1',
      vcpus: 4,
      memoryMb: 4096,
      rootGb: 10,
      isPublic: false,
      extraSpecs: { 'resources:CUSTOM_GPU': '1', 'trait:HW_CPU_X86_AVX2': 'required' },
    });
    expect(f).toMatchObject({ flavorid: 'gpu-1', vcpus: 4, isPublic: false, extraSpecs: { 'resources:CUSTOM_GPU': '1' } });
    expect(toWireFlavor(f)).toEqual({
      id: f.id,
      flavorid: 'gpu-1',
      name: 'gpu.big',
      vcpus: 4,
      memoryMb: 4096,
      rootGb: 10,
      ephemeralGb: 0,
      swap: 0,
      extraSpecs: { 'resources:CUSTOM_GPU': '1', 'trait:HW_CPU_X86_AVX2': 'required' },
    });
    await expect(createFlavor(db.pool, { name: 'gpu.big', flavorid: 'other', vcpus: 1, memoryMb: 1 })).rejects.toMatchObject({
      code: 'api_db.flavor.exists',
      message: 'Flavor with name gpu.big already exists.',
    });
    await expect(createFlavor(db.pool, { name: 'other', flavorid: 'gpu-1', vcpus: 1, memoryMb: 1 })).rejects.toMatchObject({
      code: 'api_db.flavor.exists',
      message: 'Flavor with ID gpu-1 already exists.',
    });
    await expect(createFlavor(db.pool, { name: 'gpu.big', flavorid: 'gpu-1', vcpus: 1, memoryMb: 1 })).rejects.toThrow(
      'Flavor with ID gpu-1 already exists.',
    );
    expect(await setFlavorExtraSpecs(db.pool, 'gpu-1', { 'resources:CUSTOM_GPU': '2', 'hw:cpu_policy': 'dedicated' })).toBe(true);
    expect(await deleteFlavorExtraSpec(db.pool, 'gpu-1', 'trait:HW_CPU_X86_AVX2')).toBe(true);
    expect(await deleteFlavorExtraSpec(db.pool, 'gpu-1', 'trait:HW_CPU_X86_AVX2')).toBe(false);
    expect((await getFlavorByName(db.pool, 'gpu.big'))?.extraSpecs).toEqual({ 'resources:CUSTOM_GPU': '2', 'hw:cpu_policy': 'dedicated' });
    expect(await setFlavorExtraSpecs(db.pool, 'nope', { a: 'b' })).toBe(false);
    // Private: invisible to a project without access, visible after access is granted, always to admin listing.
    expect((await listFlavors(db.pool, { projectId: 'p1' })).map((x) => x.flavorid)).not.toContain('gpu-1');
    expect(await addFlavorAccess(db.pool, 'gpu-1', 'p1')).toBe('added');
    expect(await addFlavorAccess(db.pool, 'gpu-1', 'p1')).toBe('exists');
    expect(await addFlavorAccess(db.pool, 'nope', 'p1')).toBe('not_found');
    expect(await addFlavorAccess(db.pool, 'gpu-1', 'p0')).toBe('added');
    expect(await listFlavorAccess(db.pool, 'gpu-1')).toEqual(['p1', 'p0']);
    expect((await listFlavors(db.pool, { projectId: 'p1' })).map((x) => x.flavorid)).toContain('gpu-1');
    expect((await listFlavors(db.pool)).map((x) => x.flavorid)).toEqual(['1', '2', '3', '4', '5', 'gpu-1']);
    // The admin's is_public filter: private only, public (and its project's) by default, paged after a marker.
    expect((await listFlavors(db.pool, { isPublic: false })).map((x) => x.flavorid)).toEqual(['gpu-1']);
    expect((await listFlavors(db.pool, { projectId: 'admin', isPublic: true })).map((x) => x.flavorid)).toEqual(['1', '2', '3', '4', '5']);
    expect(
      (await listFlavors(db.pool, { isPublic: null, minMemoryMb: 4096, minRootGb: 40, marker: '3', limit: 1 })).map((x) => x.flavorid),
    ).toEqual(['4']);
    expect(await removeFlavorAccess(db.pool, 'gpu-1', 'p0')).toBe(true);
    expect(await removeFlavorAccess(db.pool, 'gpu-1', 'p0')).toBe(false);
    expect(await listFlavorAccess(db.pool, 'gpu-1')).toEqual(['p1']);
    expect((await setFlavorDescription(db.pool, 'gpu-1', 'for GPUs'))?.description).toBe('for GPUs');
    expect(await setFlavorDescription(db.pool, 'nope', 'x')).toBeUndefined();
    expect(await deleteFlavor(db.pool, 'gpu-1')).toBe(true);
    expect(await deleteFlavor(db.pool, 'gpu-1')).toBe(false);
    expect(await getFlavorByFlavorId(db.pool, 'gpu-1')).toBeUndefined();
  });

  it('refuse bad values with every problem listed, writing nothing', async () => {
    await expect(createFlavor(db.pool, { name: '', flavorid: 'bad/id', vcpus: 0, memoryMb: -1, swap: 1.5 })).rejects.toThrow(
      'invalid flavor: name must be 1-255 characters; flavorid must be 1-255 of letters, digits, _ - . and space; vcpus must be an integer >= 1; memory_mb must be an integer >= 1; swap must be an integer >= 0',
    );
    expect((await listFlavors(db.pool)).length).toBe(5);
  });
});

describe('aggregates', () => {
  it('create in an AZ, hosts and metadata (tenant isolation), idempotent, updated_at moves', async () => {
    const uuid = randomUUID();
    const { aggregate, created } = await createAggregate(db.pool, { uuid, name: 'agg1', availabilityZone: 'az1' });
    expect(created).toBe(true);
    expect(aggregate).toMatchObject({ uuid, name: 'agg1', hosts: [], metadata: { availability_zone: 'az1' } });
    expect((await createAggregate(db.pool, { uuid, name: 'agg1' })).created).toBe(false);
    await expect(createAggregate(db.pool, { name: 'agg1' })).rejects.toMatchObject({ code: 'api_db.aggregate.exists' });
    expect(await addAggregateHost(db.pool, uuid, 'h2')).toBe(true);
    expect(await addAggregateHost(db.pool, uuid, 'h1')).toBe(true);
    expect(await addAggregateHost(db.pool, uuid, 'h1')).toBe(true);
    expect(await setAggregateMetadata(db.pool, uuid, { filter_tenant_id: 'p1', availability_zone: null, ssd: 'true' })).toBe(true);
    const after = await getAggregate(db.pool, uuid);
    expect(after).toMatchObject({ hosts: ['h1', 'h2'], metadata: { filter_tenant_id: 'p1', ssd: 'true' } });
    expect(after?.updatedAt.getTime()).toBeGreaterThanOrEqual(aggregate.updatedAt.getTime());
    expect((await listAggregates(db.pool, { host: 'h1' })).map((a) => a.uuid)).toEqual([uuid]);
    expect(await listAggregates(db.pool, { host: 'h9' })).toEqual([]);
    expect(await removeAggregateHost(db.pool, uuid, 'h2')).toBe(true);
    expect(await removeAggregateHost(db.pool, uuid, 'h2')).toBe(false);
    expect(await addAggregateHost(db.pool, randomUUID(), 'h1')).toBe(false);
    expect(await deleteAggregate(db.pool, uuid)).toBe(true);
    expect(await deleteAggregate(db.pool, uuid)).toBe(false);
    expect(await listAggregates(db.pool)).toEqual([]);
  });

  it('by integer id, renamed (a name in use: api_db.aggregate.exists), createdAt kept while updatedAt moves', async () => {
    const { aggregate: a } = await createAggregate(db.pool, { name: 'agg-a' });
    await createAggregate(db.pool, { name: 'agg-b' });
    expect([a.updatedAt.getTime(), a.changedAt]).toEqual([a.createdAt.getTime(), null]);
    expect((await getAggregateById(db.pool, a.id))?.uuid).toBe(a.uuid);
    for (const id of [0, -1, 2 ** 31, 1.5]) expect(await getAggregateById(db.pool, id)).toBeUndefined();
    expect(await renameAggregate(db.pool, a.uuid, 'agg-c')).toBe(true);
    await expect(renameAggregate(db.pool, a.uuid, 'agg-b')).rejects.toMatchObject({ code: 'api_db.aggregate.exists' });
    expect(await renameAggregate(db.pool, randomUUID(), 'agg-d')).toBe(false);
    const renamed = await getAggregateById(db.pool, a.id);
    expect(renamed).toMatchObject({ name: 'agg-c', createdAt: a.createdAt });
    expect(renamed?.changedAt).toEqual(renamed?.updatedAt);
    expect(renamed?.changedAt?.getTime()).toBeGreaterThanOrEqual(a.createdAt.getTime());
  });

  it('lockAggregates makes a second transaction wait for the first', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const first = withTransaction(db.pool, async (c) => {
      await lockAggregates(c);
      order.push('first locked');
      await held;
      order.push('first done');
    });
    while (order.length === 0) await new Promise((r) => setTimeout(r, 10));
    const second = withTransaction(db.pool, async (c) => {
      await lockAggregates(c);
      order.push('second locked');
    });
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first locked', 'first done', 'second locked']);
  });
});

describe('images (the Glance stand-in)', () => {
  it('seeded, created idempotently, listed, deleted; unknown and malformed ids are undefined', async () => {
    expect((await listImages(db.pool)).map((i) => i.id)).toContain('155d900f-4e14-4e4c-a73d-069cbf4541e6');
    const id = randomUUID();
    const { image, created } = await createImage(db.pool, {
      id,
      name: 'cirros',
      minDisk: 1,
      minRam: 64,
      size: 12345,
      properties: { hw_architecture: 'x86_64' },
    });
    expect(created).toBe(true);
    expect(image).toMatchObject({
      id,
      name: 'cirros',
      diskFormat: 'raw',
      containerFormat: 'bare',
      minDisk: 1,
      minRam: 64,
      size: 12345,
      status: 'active',
    });
    expect((await createImage(db.pool, { id, name: 'other' })).created).toBe(false);
    expect((await getImage(db.pool, id))?.name).toBe('cirros');
    expect(await getImage(db.pool, randomUUID())).toBeUndefined();
    expect(await getImage(db.pool, 'not-an-image')).toBeUndefined();
    await expect(createImage(db.pool, { name: 'x', minRam: -1 })).rejects.toMatchObject({ code: 'api_db.image.invalid' });
    expect(await deleteImage(db.pool, id)).toBe(true);
    expect(await deleteImage(db.pool, id)).toBe(false);
  });
});

describe('catalogue notifications (migration 005)', () => {
  test('every committed write of flavors, extra specs, access lists or images notifies its table on CATALOGUE_CHANNEL; reads and rolled-back writes do not', async () => {
    const listener = new Client({ connectionString: db.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === CATALOGUE_CHANNEL) heard.push(n.payload ?? '');
    });
    await listener.query(`LISTEN ${CATALOGUE_CHANNEL}`);
    // NOTE: a round trip on the listening session after a write delivers what that write notified
    const settle = async (): Promise<string[]> => {
      await listener.query('SELECT 1');
      return heard.splice(0);
    };
    try {
      const flavorid = `notify-${randomUUID()}`;
      await createFlavor(db.pool, { name: flavorid, flavorid, vcpus: 1, memoryMb: 64, extraSpecs: { 'hw:cpu_policy': 'shared' } });
      expect((await settle()).sort()).toEqual(['flavor_extra_specs', 'flavors']);
      await setFlavorExtraSpecs(db.pool, flavorid, { 'hw:mem_page_size': 'small' });
      expect(await settle()).toEqual(['flavor_extra_specs']);
      await deleteFlavorExtraSpec(db.pool, flavorid, 'hw:mem_page_size');
      expect(await settle()).toEqual(['flavor_extra_specs']);
      await setFlavorDescription(db.pool, flavorid, 'described');
      expect(await settle()).toEqual(['flavors']);
      expect((await getFlavorAndImage(db.pool, flavorid, randomUUID())).flavorAccess).toEqual([]);
      await addFlavorAccess(db.pool, flavorid, 'p1');
      await addFlavorAccess(db.pool, flavorid, 'p0');
      expect(await settle()).toEqual(['flavor_projects', 'flavor_projects']);
      expect((await getFlavorAndImage(db.pool, flavorid, randomUUID())).flavorAccess).toEqual(['p1', 'p0']);
      await removeFlavorAccess(db.pool, flavorid, 'p1');
      expect(await settle()).toEqual(['flavor_projects']);
      const { image } = await createImage(db.pool, { name: 'notified' });
      expect(await settle()).toEqual(['images']);

      await getFlavorAndImage(db.pool, flavorid, image.id);
      await getFlavorByFlavorId(db.pool, flavorid);
      expect(await settle()).toEqual([]);
      await expect(
        withTransaction(db.pool, async (tx) => {
          await setFlavorDescription(tx, flavorid, 'never');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await settle()).toEqual([]);

      await deleteImage(db.pool, image.id);
      expect(await settle()).toEqual(['images']);
      await deleteFlavor(db.pool, flavorid);
      expect(await settle()).toContain('flavors');
    } finally {
      await listener.end();
    }
  });
});
