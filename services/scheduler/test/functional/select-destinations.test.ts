/**
 * The whole scheduler as a service: real gRPC SchedulerService replicas, the real placement gRPC
 * service, real API and cell databases. Alternates stay in the chosen host's cell; multi-create
 * is all-or-nothing; NoValidHost carries its diagnosis; disabled and down hosts are never chosen;
 * the host cache follows the cells incrementally.
 */
import { randomUUID } from 'node:crypto';
import { setServiceDisabled, getService } from '@cellsched/cell-db';
import { type SeededHost, placementUsage } from '../../../../e2e/bench/scheduler/seed';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';
import type { SchedulerApp } from '../../src/app';

let cloud: RealCloud;
let app: SchedulerApp;
let client: SchedulerClient;

const size = { vcpus: 2, memoryMb: 4096, diskGb: 100 };

async function reset(specs: Parameters<RealCloud['addHosts']>[0]): Promise<SeededHost[]> {
  await cloud.placementDb.pool.query(`TRUNCATE allocations, consumers, inventories, resource_provider_traits, resource_provider_aggregates,
    resource_providers RESTART IDENTITY CASCADE`);
  for (const c of cloud.cells) await c.db.pool.query('TRUNCATE compute_nodes, services RESTART IDENTITY CASCADE');
  const hosts = await cloud.addHosts(specs);
  await app.cache.refresh({ full: true });
  await app.mappings.refresh({ full: true }); // NOTE: a host seeded again may have moved to the other cell
  app.candidates.clear(); // NOTE: the providers were replaced under the running replica
  return hosts;
}

beforeAll(async () => {
  cloud = await startRealCloud('sched_fn');
  ({ app, client } = await cloud.startReplica());
});
afterAll(async () => {
  await cloud.close();
});

test("alternates are all in the chosen host's cell, never the chosen host, and carry placement's allocation request", async () => {
  const hosts = await reset(Array.from({ length: 8 }, (_, i) => ({ host: `alt-${i}`, cell: i % 2, ...size })));
  const cellOf = new Map(hosts.map((h) => [h.uuid, cloud.cells[h.cell]?.uuid]));
  for (const seed of [1, 2, 3, 4]) {
    const r = await select(client, requestSpec({ seed }), [randomUUID()], 5);
    if (!r.ok) throw r.err;
    const [list] = r.res.destinations;
    const [chosen, ...alternates] = list?.selections ?? [];
    expect(chosen).toBeDefined();
    expect(alternates).toHaveLength(3); // 4 hosts in the chosen cell, minus the chosen one
    expect(new Set(alternates.map((a) => a.cellUuid))).toEqual(new Set([chosen?.cellUuid]));
    expect(alternates.map((a) => a.computeNodeUuid)).not.toContain(chosen?.computeNodeUuid);
    for (const s of list?.selections ?? []) {
      expect(cellOf.get(s.computeNodeUuid)).toBe(s.cellUuid);
      expect(Object.keys(JSON.parse(s.allocationRequest?.json ?? '{}').allocations)).toEqual([s.computeNodeUuid]);
      expect(s.allocationRequest?.version).toBe('1.36');
    }
  }
});

test('multi-create is all-or-nothing: 5 instances into room for 4 claim nothing; 4 claim 4', async () => {
  await reset([
    { host: 'mc-1', cell: 0, ...size },
    { host: 'mc-2', cell: 1, ...size },
  ]);
  const five = Array.from({ length: 5 }, () => randomUUID());
  const r = await select(client, requestSpec({ numInstances: 5 }), five);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.err.failure?.code).toBe('scheduler.no_valid_host');
  expect((await placementUsage(cloud.placementDb.pool)).consumers.size).toBe(0);

  const four = five.slice(0, 4);
  const ok = await select(client, requestSpec({ numInstances: 4 }), four);
  if (!ok.ok) throw ok.err;
  expect(ok.res.destinations).toHaveLength(4);
  const usage = await placementUsage(cloud.placementDb.pool);
  expect([...usage.consumers.keys()].sort()).toEqual([...four].sort());
  expect(usage.overCapacity).toEqual([]);
  // A retried request replaces its claims rather than doubling them.
  const again = await select(client, requestSpec({ numInstances: 1 }), [four[0] as string]);
  expect(again.ok).toBe(false); // the cloud is full, placement does not discount the consumer's own claim...
  expect((await placementUsage(cloud.placementDb.pool)).consumers.has(four[0] as string)).toBe(false); // ...and it released it
});

test('NoValidHost is FAILED_PRECONDITION with a per-filter diagnosis', async () => {
  await reset([
    { host: 'nv-1', cell: 0, ...size, disabled: true },
    { host: 'nv-2', cell: 1, ...size, forcedDown: true },
  ]);
  const r = await select(client, requestSpec(), [randomUUID()]);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.err.failure?.code).toBe('scheduler.no_valid_host');
  expect((r.err as { status?: number }).status).toBe(9); // FAILED_PRECONDITION
  const diagnosis = r.err.failure?.diagnosis as { filter: string; hostsBefore: number; hostsAfter: number; reason: string }[];
  expect(diagnosis).toContainEqual(expect.objectContaining({ filter: 'ComputeFilter', hostsBefore: 2, hostsAfter: 0 }));

  const tooBig = await select(
    client,
    requestSpec({
      flavor: { id: 0, flavorid: 'x', name: 'huge', vcpus: 64, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} },
    }),
    [randomUUID()],
  );
  expect(tooBig.ok).toBe(false);
  if (!tooBig.ok) expect(tooBig.err.failure?.code).toBe('scheduler.no_valid_host');
});

test('bad input is INVALID_ARGUMENT scheduler.request.invalid and claims nothing', async () => {
  await reset([{ host: 'bi-1', cell: 0, ...size }]);
  const u = randomUUID();
  const r = await select(client, requestSpec(), [u, u]);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.err.failure?.code).toBe('scheduler.request.invalid');
  expect((await placementUsage(cloud.placementDb.pool)).consumers.size).toBe(0);
});

test('disabled, forced-down and silent hosts are never chosen, nor offered as alternates', async () => {
  const old = new Date(Date.now() - 10 * 60_000);
  const hosts = await reset([
    { host: 'ok-1', cell: 0, ...size, vcpus: 20 },
    { host: 'ok-2', cell: 0, ...size, vcpus: 20 },
    { host: 'dis-1', cell: 0, ...size, vcpus: 40, disabled: true },
    { host: 'fd-1', cell: 0, ...size, vcpus: 40, forcedDown: true },
    { host: 'old-1', cell: 0, ...size, vcpus: 40, lastSeenUp: old },
  ]);
  const good = new Set(hosts.filter((h) => h.host.startsWith('ok-')).map((h) => h.uuid));
  for (let i = 0; i < 12; i++) {
    const r = await select(client, requestSpec({ seed: i + 1 }), [randomUUID()], 4);
    if (!r.ok) throw r.err;
    for (const s of r.res.destinations[0]?.selections ?? []) expect(good.has(s.computeNodeUuid)).toBe(true);
  }
});

test('the host cache follows a disable incrementally (one row read), then never chooses that host', async () => {
  const hosts = await reset([
    { host: 'inc-1', cell: 0, ...size, vcpus: 50 },
    { host: 'inc-2', cell: 1, ...size, vcpus: 50 },
  ]);
  const victim = hosts[0] as SeededHost;
  const db = cloud.cells[0]?.db.pool;
  if (db === undefined) throw new Error('no cell');
  // Seeded rows older than the cursor's overlap window, as in a cloud that has been running a while.
  for (const c of cloud.cells) {
    await c.db.pool.query("UPDATE compute_nodes SET updated_at = now() - interval '1 hour'");
    await c.db.pool.query("UPDATE services SET updated_at = now() - interval '1 hour'");
  }
  await app.cache.refresh({ full: true });
  const service = await getService(db, victim.host, 'nova-compute');
  await setServiceDisabled(db, service?.id ?? -1, true, 'maintenance');
  const before = app.cache.stats.rowsRead;
  await app.cache.refresh();
  expect(app.cache.stats.rowsRead - before).toBe(1);
  for (let i = 0; i < 6; i++) {
    const r = await select(client, requestSpec({ seed: 100 + i }), [randomUUID()]);
    if (!r.ok) throw r.err;
    expect(r.res.destinations[0]?.selections[0]?.serviceHost).toBe('inc-2');
  }
});

test('a stale host cache answers at once from its copy and refreshes in the background (a request never waits for the cells)', async () => {
  const hosts = await reset([
    { host: 'bg-1', cell: 0, ...size },
    { host: 'bg-2', cell: 1, ...size },
  ]);
  const victim = hosts[0] as SeededHost;
  const db = cloud.cells[0]?.db.pool;
  if (db === undefined) throw new Error('no cell');
  const service = await getService(db, victim.host, 'nova-compute');
  await setServiceDisabled(db, service?.id ?? -1, true, 'maintenance');
  await new Promise((r) => setTimeout(r, 300)); // past the replica's hostCacheRefreshMs (200)
  const refreshes = app.cache.stats.refreshes;
  // The lookup that finds the cache stale is answered from the copy (the host still enabled)...
  const stale = await app.cache.getComputeNodes([victim.uuid]);
  expect(stale.get(victim.uuid)?.serviceDisabled).toBe(false);
  // ...while the refresh it started lands by itself, without another caller waiting on it.
  const deadline = Date.now() + 5000;
  while (app.cache.stats.refreshes === refreshes && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(app.cache.stats.refreshes).toBe(refreshes + 1);
  expect((await app.cache.getComputeNodes([victim.uuid])).get(victim.uuid)?.serviceDisabled).toBe(true);
});

test('an incremental host-cache read looks back its overlap (2 s) for late commits, not further', async () => {
  const hosts = await reset([
    { host: 'ov-1', cell: 0, ...size },
    { host: 'ov-2', cell: 0, ...size },
  ]);
  const db = cloud.cells[0]?.db.pool;
  if (db === undefined) throw new Error('no cell');
  await db.query("UPDATE compute_nodes SET updated_at = now() - interval '1 hour'");
  await db.query("UPDATE services SET updated_at = now() - interval '1 hour'");
  await app.cache.refresh({ full: true });
  await app.cache.refresh(); // the cursor is now (database time) - 2 s
  // Two late commits: one stamped 1 s ago (inside the look-back), one 3.5 s ago (outside 2 s, inside
  // the cell-db default of 5 s: this is what the shorter overlap saves). NOTE: holds while these
  // statements run within 1.5 s of the refresh above.
  await db.query("UPDATE services SET updated_at = now() - interval '1 second', disabled = true WHERE host = $1", [hosts[0]?.host]);
  await db.query("UPDATE services SET updated_at = now() - interval '3.5 seconds', disabled = true WHERE host = $1", [hosts[1]?.host]);
  const before = app.cache.stats.rowsRead;
  await app.cache.refresh();
  expect(app.cache.stats.rowsRead - before).toBe(1);
  const records = await app.cache.getComputeNodes(hosts.map((h) => h.uuid));
  expect(records.get(hosts[0]?.uuid ?? '')?.serviceDisabled).toBe(true);
  expect(records.get(hosts[1]?.uuid ?? '')?.serviceDisabled).toBe(false); // older than the overlap: left to the full resync
});
