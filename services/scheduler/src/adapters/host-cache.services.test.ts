import { randomUUID } from 'node:crypto';
import { API_DB_MIGRATIONS_DIR } from '@cellsched/api-db';
import {
  CELL_DB_MIGRATIONS_DIR,
  recordServiceHeartbeat,
  setServiceDisabled,
  setServiceForcedDown,
  updateComputeNodeStats,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { HostCache } from './host-cache';

let cell: TestDatabase;
let api: TestDatabase;
beforeAll(async () => {
  cell = await createTestDatabase({ prefix: 'sched_hc_svc', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
  api = await createTestDatabase({ prefix: 'sched_hc_api', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await cell.drop();
  await api.drop();
});

async function computeHost(host: string): Promise<{ serviceId: number; uuid: string }> {
  const { service } = await upsertService(cell.pool, { host, binary: 'nova-compute' });
  const uuid = randomUUID();
  await upsertComputeNode(cell.pool, {
    uuid,
    serviceId: service.id,
    host,
    hypervisorHostname: `${host}.node`,
    vcpus: 16,
    memoryMb: 32768,
    localGb: 500,
    supportedInstances: [['x86_64', 'qemu', 'hvm']],
    stats: { failed_builds: '2', io_workload: '3' },
  });
  return { serviceId: service.id, uuid };
}

/** A cache of the test's cell, refreshing every second of `now` (never waiting on a stale copy), looking back `overlapMs`. */
function cacheAt(overlapMs: number, now: () => number): HostCache {
  return new HostCache({
    cells: [{ uuid: 'cell-1', db: cell.pool }],
    apiDb: api.pool,
    refreshMs: 1000,
    fullResyncMs: 3_600_000,
    maxStaleMs: 1,
    overlapMs,
    now,
  });
}

test("service rows read alone (heartbeat, disable, force down) update their nodes' records and keep the rest; rows read again change nothing", async () => {
  const a = await computeHost('hc-a');
  const b = await computeHost('hc-b');
  let now = 0;
  // NOTE: overlap 10 s: every refresh reads every row changed in the test again.
  const cache = cacheAt(10_000, () => now);
  const before = await cache.getComputeNodes([a.uuid, b.uuid]);
  expect(before.get(a.uuid)).toMatchObject({ serviceDisabled: false, forcedDown: false, lastHeartbeatAt: expect.any(Date) });

  await new Promise((r) => setTimeout(r, 20));
  await recordServiceHeartbeat(cell.pool, 'hc-a', 'nova-compute');
  await setServiceDisabled(cell.pool, b.serviceId, true, 'maintenance');
  now = 2000;
  const after = await cache.getComputeNodes([a.uuid, b.uuid]);
  const [a0, a1, b1] = [before.get(a.uuid), after.get(a.uuid), after.get(b.uuid)];
  expect(a1?.lastHeartbeatAt?.getTime()).toBeGreaterThan(a0?.lastHeartbeatAt?.getTime() ?? Number.POSITIVE_INFINITY);
  expect({ ...a1, lastHeartbeatAt: undefined }).toEqual({ ...a0, lastHeartbeatAt: undefined });
  expect(a1).toMatchObject({
    nodename: 'hc-a.node',
    numIoOps: 3,
    failedBuilds: 2,
    supportedInstances: [{ arch: 'x86_64', hvType: 'qemu', vmMode: 'hvm' }],
  });
  expect(b1).toMatchObject({ serviceDisabled: true, serviceDisabledReason: 'maintenance', forcedDown: false });

  now = 4000;
  const again = await cache.getComputeNodes([a.uuid, b.uuid]);
  expect(again.get(a.uuid)).toEqual(a1); // read again in the overlap
  expect(again.get(b.uuid)).toEqual(b1);

  await setServiceForcedDown(cell.pool, a.serviceId, true);
  now = 6000;
  expect((await cache.getComputeNodes([a.uuid])).get(a.uuid)).toMatchObject({ forcedDown: true, serviceDisabled: false });
});

test('a heartbeat of a service row the cache holds is taken in as liveness only, and the next state change whole', async () => {
  const c = await computeHost('hc-c');
  let now = 0;
  // NOTE: no overlap, so that only what changed since each read is read (the node rows are not read again).
  const cache = cacheAt(0, () => now);
  const seen = async (): Promise<number> => (await cache.getComputeNodes([c.uuid])).get(c.uuid)?.lastHeartbeatAt?.getTime() ?? 0;
  const beat = async (): Promise<void> => {
    await new Promise((r) => setTimeout(r, 20));
    await recordServiceHeartbeat(cell.pool, 'hc-c', 'nova-compute');
    await new Promise((r) => setTimeout(r, 5));
    now += 2000;
  };
  const t0 = await seen();
  await beat(); // a row the cache does not hold yet: read whole
  const t1 = await seen();
  const whole = cache.stats.rowsRead;
  await beat(); // held: its liveness only
  const t2 = await seen();
  expect([t1 > t0, t2 > t1]).toEqual([true, true]);
  expect(cache.stats.rowsRead - whole).toBe(1);
  await setServiceDisabled(cell.pool, c.serviceId, true, 'held, then changed');
  now += 2000;
  expect((await cache.getComputeNodes([c.uuid])).get(c.uuid)).toMatchObject({
    serviceDisabled: true,
    serviceDisabledReason: 'held, then changed',
    lastHeartbeatAt: new Date(t2),
  });
});

test('a node row the cache holds is not read again in the overlap; its next change is', async () => {
  const d = await computeHost('hc-d');
  let now = 0;
  // NOTE: overlap 10 s: every refresh lists every row changed in the test again.
  const cache = cacheAt(10_000, () => now);
  const ioOps = async (): Promise<number | undefined> => (await cache.getComputeNodes([d.uuid])).get(d.uuid)?.numIoOps;
  expect(await ioOps()).toBe(3); // the full load
  now += 2000;
  expect(await ioOps()).toBe(3); // the first incremental read: the rows in its window, read whole once
  const held = cache.stats.rowsRead;
  now += 2000;
  expect(await ioOps()).toBe(3);
  expect(cache.stats.rowsRead - held).toBe(0); // listed again, held: not read
  await updateComputeNodeStats(cell.pool, d.uuid, { io_workload: '5' });
  now += 2000;
  expect(await ioOps()).toBe(5);
  expect(cache.stats.rowsRead - held).toBe(1); // the changed node, whole
  now += 2000;
  expect(await ioOps()).toBe(5);
  expect(cache.stats.rowsRead - held).toBe(1);
});
