// DELETE /os-services/{id} as Nova answers it (ids, 400/403/404/409), against real PostgreSQL
// and RabbitMQ; the fake super-conductor records the delete_service cast, and the test plays its
// part (the service row soft-deleted last, as the super-conductor does once everything else is
// done) so the api can answer 204 once the service is gone, 409 when it refuses, 503 when late.
import { randomUUID } from 'node:crypto';
import { createCellMapping } from '@cellsched/api-db';
import {
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  createMigration,
  deleteServices,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { as, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
let cell2: TestDatabase | undefined;
const ids: Record<string, { id: number; uuid: string }> = {};
const FLAVOR = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };

beforeAll(async () => {
  h = await startHarness('svcdel');
  for (const host of ['idle-1', 'idle-2', 'busy', 'moving', 'racing', 'stalled']) {
    const { service } = await upsertService(h.cell1.pool, { host, binary: 'nova-compute', topic: 'compute' });
    ids[host] = { id: service.id, uuid: service.uuid };
    await upsertComputeNode(h.cell1.pool, {
      uuid: randomUUID(),
      serviceId: service.id,
      host,
      hypervisorHostname: host,
      vcpus: 8,
      memoryMb: 16384,
      localGb: 100,
    });
  }
  await createInstance(h.cell1.pool, {
    uuid: randomUUID(),
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    vmState: 'error',
    host: 'busy',
    node: 'busy',
  });
  await createMigration(h.cell1.pool, {
    instanceUuid: randomUUID(),
    migrationType: 'migration',
    status: 'migrating',
    sourceCompute: 'x',
    sourceNode: 'x',
    destCompute: 'moving',
    destNode: 'moving',
  });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await cell2?.drop();
});

const del = (id: string | number, token = 'admin', version?: string): ReturnType<Harness['inject']> =>
  h.inject({ method: 'DELETE', url: `/v2.1/os-services/${id}`, headers: as(token, version) });

/** Plays the super-conductor: applies the next delete_service cast for `host` to the cell DB. */
async function applyDeleteOf(host: string): Promise<void> {
  const cast = await waitFor(`delete_service of ${host}`, () => h.seen.serviceDeletes.find((c) => c.host === host));
  await deleteServices(h.cell1.pool, [ids[host]?.id ?? -1]);
  expect(cast).toMatchObject({ cellUuid: h.cells.cell1.uuid, serviceUuid: ids[host]?.uuid, binary: 'nova-compute' });
}

const listed = async (): Promise<string[]> =>
  ((await h.inject({ url: '/v2.1/os-services', headers: as('admin') })).json() as { services: { host: string }[] }).services.map(
    (s) => s.host,
  );

describe('DELETE /os-services/{id}', () => {
  it('is admin only, and refuses ids of the wrong kind for the microversion', async () => {
    expect((await del(ids['idle-1']?.uuid ?? '', 'alice:p1', '2.53')).json()).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-services:delete to be performed." },
    });
    expect((await del('nope', 'admin', '2.53')).json()).toEqual({ badRequest: { code: 400, message: 'Invalid uuid nope' } });
    expect((await del(ids['idle-1']?.uuid ?? '', 'admin', '2.52')).json()).toEqual({
      badRequest: { code: 400, message: 'Invalid input received: id must be an integer' },
    });
    expect((await del(randomUUID(), 'admin', '2.53')).json()).toEqual({
      itemNotFound: { code: 404, message: expect.stringMatching(/^Service [0-9a-f-]{36} not found\.$/) },
    });
    expect((await del(987654)).json()).toEqual({ itemNotFound: { code: 404, message: 'Service 987654 not found.' } });
    expect(h.seen.serviceDeletes).toEqual([]);
  });

  it('refuses (409) a compute service whose host has instances or in-progress migrations, and casts nothing', async () => {
    expect((await del(ids.busy?.uuid ?? '', 'admin', '2.53')).json()).toEqual({
      conflictingRequest: {
        code: 409,
        message: 'Unable to delete compute service that is hosting instances. Migrate or delete the instances first.',
      },
    });
    expect((await del(ids.moving?.id ?? 0)).json()).toEqual({
      conflictingRequest: {
        code: 409,
        message: 'Unable to delete compute service that has in-progress migrations. Complete the migrations or delete the instances first.',
      },
    });
    expect(h.seen.serviceDeletes).toEqual([]);
    expect(await listed()).toEqual(expect.arrayContaining(['busy', 'moving']));
  });

  it('deletes through the super-conductor by uuid (2.53) and by integer id (2.1), answering 204 once the service is gone', async () => {
    const [byUuid] = await Promise.all([del(ids['idle-1']?.uuid ?? '', 'admin', '2.53'), applyDeleteOf('idle-1')]);
    expect([byUuid.statusCode, byUuid.body]).toEqual([204, '']);
    expect(await listed()).not.toContain('idle-1');
    const [byId] = await Promise.all([del(ids['idle-2']?.id ?? 0), applyDeleteOf('idle-2')]);
    expect(byId.statusCode).toBe(204);
    expect(await listed()).not.toContain('idle-2');
    // gone is gone: the same id again is a 404
    expect((await del(ids['idle-1']?.uuid ?? '', 'admin', '2.53')).statusCode).toBe(404);
  });

  it("answers Nova's 409 as soon as the super-conductor refuses (the host got an instance after the api's check)", async () => {
    const started = Date.now();
    const [res] = await Promise.all([
      del(ids.racing?.uuid ?? '', 'admin', '2.53'),
      (async () => {
        await waitFor('delete_service of racing', () => h.seen.serviceDeletes.find((c) => c.host === 'racing'));
        // a build landed on the host between the api's check and the super-conductor's: it refuses, the row stays
        await createInstance(h.cell1.pool, {
          uuid: randomUUID(),
          projectId: 'p1',
          userId: 'u1',
          flavor: FLAVOR,
          vmState: 'building',
          host: 'racing',
          node: 'racing',
        });
      })(),
    ]);
    expect(res.json()).toEqual({
      conflictingRequest: {
        code: 409,
        message: 'Unable to delete compute service that is hosting instances. Migrate or delete the instances first.',
      },
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await listed()).toContain('racing');
  });

  it('answers 503 (not 204) when the super-conductor has not finished the delete within the bound', async () => {
    const deps = h.deps as { serviceWriteWaitMs?: number };
    deps.serviceWriteWaitMs = 600;
    try {
      const res = await del(ids.stalled?.uuid ?? '', 'admin', '2.53');
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        serviceUnavailable: {
          code: 503,
          message: expect.stringMatching(/^The delete of service [0-9a-f-]{36} \(host stalled\) was accepted but not completed in time/),
        },
      });
      expect(h.seen.serviceDeletes.map((c) => c.host)).toContain('stalled');
      // once applied, it is gone (the cast was durable)
      await applyDeleteOf('stalled');
      expect(await listed()).not.toContain('stalled');
    } finally {
      delete deps.serviceWriteWaitMs;
    }
  });

  it("an integer id found in two cells is a 400, as Nova's ServiceNotUnique", async () => {
    cell2 = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'c2_svcdel' });
    await createCellMapping(h.apiDb.pool, { name: 'cell-b', transportUrl: 'amqp://x@127.0.0.1/cellb', databaseConnection: cell2.url });
    let other = (await upsertService(cell2.pool, { host: 'other', binary: 'nova-compute' })).service;
    while (other.id < (ids.busy?.id ?? 0))
      other = (await upsertService(cell2.pool, { host: `other-${other.id}`, binary: 'nova-compute' })).service;
    expect(other.id).toBe(ids.busy?.id);
    expect((await del(other.id)).json()).toEqual({
      badRequest: { code: 400, message: `Service id ${other.id} refers to multiple services.` },
    });
    expect(h.seen.serviceDeletes).toHaveLength(4);
  });
});
