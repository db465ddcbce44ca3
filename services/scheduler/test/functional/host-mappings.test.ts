/**
 * Undiscovered hosts are never chosen: a real replica (gRPC, placement, API and cell DBs) and
 * hosts whose host mapping is missing, removed, then added back; and the host-mapping copy reads
 * only what was added, or everything again after a removal.
 */
import { randomUUID } from 'node:crypto';
import { addHostMappings, deleteHostMapping, listCellMappings } from '@cellsched/api-db';
import { HostMappingCache } from '../../src/adapters/host-mappings';
import type { SchedulerApp } from '../../src/app';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let app: SchedulerApp;
let client: SchedulerClient;

beforeAll(async () => {
  cloud = await startRealCloud('sched_hm');
  await cloud.addHosts(Array.from({ length: 4 }, (_, i) => ({ host: `hm-${i}`, cell: i % 2, vcpus: 64, memoryMb: 65536, diskGb: 1000 })));
  ({ app, client } = await cloud.startReplica());
}, 120_000);
afterAll(async () => {
  await cloud?.close();
});

async function chosenHost(): Promise<string | undefined> {
  const uuid = randomUUID();
  const r = await select(client, requestSpec({ seed: Math.floor(Math.random() * 1e6) }), [uuid]);
  if (!r.ok) return undefined;
  return r.res.destinations[0]?.selections[0]?.serviceHost;
}

test('a host without a host mapping is never chosen; mapped again, it is', async () => {
  const cell0 = cloud.cells[0]?.uuid ?? '';
  // only hm-0 keeps its mapping
  for (const h of ['hm-1', 'hm-2', 'hm-3']) expect(await deleteHostMapping(cloud.apiDb.pool, h)).toBe(true);
  await app.mappings.refresh();
  const seen = new Set<string>();
  for (let i = 0; i < 12; i++) seen.add((await chosenHost()) ?? 'NoValidHost');
  expect([...seen]).toEqual(['hm-0']);
  // with hm-0 unmapped too, nothing is left: NoValidHost, the snapshot line saying why
  await deleteHostMapping(cloud.apiDb.pool, 'hm-0');
  await app.mappings.refresh();
  const none = await select(client, requestSpec(), [randomUUID()]);
  expect(none.ok).toBe(false);
  if (none.ok) return;
  expect(none.err.failure?.code).toBe('scheduler.no_valid_host');
  expect(none.err.failure?.diagnosis).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        filter: 'host_state_snapshot',
        hostsBefore: 4,
        hostsAfter: 0,
        reason: 'no compute node record of a discovered host (4 hosts)',
      }),
    ]),
  );
  // discovered again (hm-2 is in cell index 0): chosen
  const id = (await listCellMappings(cloud.apiDb.pool)).find((c) => c.uuid === cell0)?.id ?? -1;
  await addHostMappings(cloud.apiDb.pool, id, ['hm-2']);
  await app.mappings.refresh();
  expect(await chosenHost()).toBe('hm-2');
}, 60_000);

test('a host mapped to another cell than its compute node is not chosen either', async () => {
  const other = (await listCellMappings(cloud.apiDb.pool)).find((c) => c.uuid === cloud.cells[1]?.uuid)?.id ?? -1;
  await deleteHostMapping(cloud.apiDb.pool, 'hm-2');
  await addHostMappings(cloud.apiDb.pool, other, ['hm-2']); // hm-2's node is in the first cell
  await app.mappings.refresh();
  expect(await chosenHost()).toBeUndefined();
});

test('the copy reads the mappings added since, and everything again once one went', async () => {
  const copy = new HostMappingCache(cloud.apiDb.pool, 3_600_000);
  await copy.refresh();
  expect(copy.stats).toMatchObject({ fullLoads: 1 });
  const read = copy.stats.rowsRead;
  const [cellA] = await listCellMappings(cloud.apiDb.pool);
  await copy.refresh();
  expect(copy.stats).toMatchObject({ fullLoads: 1, rowsRead: read }); // nothing changed: one count, no row
  await addHostMappings(cloud.apiDb.pool, cellA?.id ?? -1, ['late-1', 'late-2']);
  await copy.refresh();
  expect(copy.stats).toMatchObject({ fullLoads: 1, rowsRead: read + 2 });
  expect(copy.isMapped('late-1', cellA?.uuid ?? '')).toBe(true);
  await deleteHostMapping(cloud.apiDb.pool, 'late-1');
  await copy.refresh();
  expect(copy.stats.fullLoads).toBe(2);
  expect(copy.isMapped('late-1', cellA?.uuid ?? '')).toBe(false);
  expect(copy.isMapped('late-2', cellA?.uuid ?? '')).toBe(true);
});
