// Hosts that stop existing leave the host cache at its next incremental refresh: a deleted
// compute service (os-services DELETE) or a host its compute process no longer serves (both
// soft-delete the service and its nodes); a host that comes back is a new service and returns.
import { randomUUID } from 'node:crypto';
import { API_DB_MIGRATIONS_DIR } from '@cellsched/api-db';
import { CELL_DB_MIGRATIONS_DIR, deleteServices, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { HostCache } from './host-cache';

let cell: TestDatabase;
let api: TestDatabase;
beforeAll(async () => {
  cell = await createTestDatabase({ prefix: 'sched_hc_del', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
  api = await createTestDatabase({ prefix: 'sched_hc_delapi', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await cell.drop();
  await api.drop();
});

async function computeHost(host: string, uuid: string = randomUUID()): Promise<{ serviceId: number; uuid: string }> {
  const { service } = await upsertService(cell.pool, { host, binary: 'nova-compute', computeProcess: 'p-1' });
  await upsertComputeNode(cell.pool, {
    uuid,
    serviceId: service.id,
    host,
    hypervisorHostname: host,
    vcpus: 16,
    memoryMb: 32768,
    localGb: 500,
  });
  return { serviceId: service.id, uuid };
}

test("deleted services' nodes leave the cache at the next incremental refresh; a host that comes back returns", async () => {
  const [a, b, c] = [await computeHost('del-a'), await computeHost('del-b'), await computeHost('del-c')];
  let now = 0;
  const cache = new HostCache({
    cells: [{ uuid: 'cell-1', db: cell.pool }],
    apiDb: api.pool,
    refreshMs: 1000,
    fullResyncMs: 3_600_000,
    maxStaleMs: 1,
    overlapMs: 2000,
    now: () => now,
  });
  expect((await cache.getComputeNodes([a.uuid, b.uuid, c.uuid])).size).toBe(3);
  await deleteServices(cell.pool, [a.serviceId, b.serviceId]);
  now = 2000;
  expect([...(await cache.getComputeNodes([a.uuid, b.uuid, c.uuid])).keys()]).toEqual([c.uuid]);
  expect(cache.size).toBe(1);
  expect(cache.stats.fullLoads).toBe(1); // incrementally, not by a full reload
  // del-a comes back (its compute starts again with it): a new service, the same node uuid
  const back = await computeHost('del-a', a.uuid);
  expect(back.serviceId).not.toBe(a.serviceId);
  now = 4000;
  expect((await cache.getComputeNodes([a.uuid])).get(a.uuid)).toMatchObject({ host: 'del-a', serviceDisabled: false });
  expect(cache.size).toBe(2);
});
