// `cellsched-manage placement sync_aggregates` as a child process against real databases (API,
// one cell) and a real placement: every aggregate host's compute node provider gets the
// aggregate (others kept), and Nova's report and exit code for hosts it cannot place.
import { randomUUID } from 'node:crypto';
import {
  addAggregateHost,
  addHostMappings,
  API_DB_MIGRATIONS_DIR,
  createAggregate,
  createCellMapping,
  getCellMapping,
} from '@cellsched/api-db';
import { CELL_DB_MIGRATIONS_DIR, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { ReportClient } from '@cellsched/placement-client';
import { buildManage, manage } from './cli-support';
import { startPlacement, type PlacementProcess } from './placement-support';

let api: TestDatabase;
let cell1: TestDatabase;
let placement: PlacementProcess;
const rp = { h1: randomUUID(), h2: randomUUID(), noProvider: randomUUID() };
const other = randomUUID();
const sync = (...args: string[]) =>
  manage(['--api-db-url', api.url, '--placement-url', placement.url, 'placement', 'sync_aggregates', ...args]);

async function addNode(host: string, uuid: string): Promise<void> {
  const { service } = await upsertService(cell1.pool, { host, binary: 'nova-compute' });
  await upsertComputeNode(cell1.pool, {
    uuid,
    serviceId: service.id,
    host,
    hypervisorHostname: host,
    vcpus: 8,
    memoryMb: 8192,
    localGb: 100,
  });
}

beforeAll(async () => {
  buildManage();
  const make = (prefix: string, kind: 'api' | 'cell') =>
    createTestDatabase({ prefix, kind, migrationsDir: kind === 'api' ? API_DB_MIGRATIONS_DIR : CELL_DB_MIGRATIONS_DIR, poolMax: 2 });
  [api, cell1, placement] = await Promise.all([make('mng_sa_api', 'api'), make('mng_sa_c1', 'cell'), startPlacement()]);
  const cellUuid = randomUUID();
  await createCellMapping(api.pool, {
    uuid: cellUuid,
    name: 'cell1',
    transportUrl: 'amqp://u:p@127.0.0.1/c1',
    databaseConnection: cell1.url,
  });
  const report = new ReportClient({ baseUrl: placement.url });
  for (const host of ['h1', 'h2'] as const) {
    await addNode(host, rp[host]);
    await report.ensureResourceProvider(rp[host], host);
  }
  await report.addProviderAggregate(rp.h1, other);
  await addNode('no-provider', rp.noProvider);
  await upsertService(cell1.pool, { host: 'no-node', binary: 'nova-compute' });
  await addHostMappings(api.pool, (await getCellMapping(api.pool, cellUuid))?.id ?? 0, ['h1', 'h2', 'no-provider', 'no-node']);
}, 120_000);

afterAll(async () => {
  await placement?.stop();
  for (const d of [api, cell1] as (TestDatabase | undefined)[]) await d?.drop();
});

const aggregatesOf = async (uuid: string): Promise<string[]> =>
  (await new ReportClient({ baseUrl: placement.url }).getProviderAggregates(uuid)).sort();

test("adds every aggregate's hosts on their providers, keeping their other aggregates (exit 0), and is idempotent", async () => {
  const { aggregate: a } = await createAggregate(api.pool, { name: 'agg-a', availabilityZone: 'az1' });
  const { aggregate: b } = await createAggregate(api.pool, { name: 'agg-b' });
  for (const [agg, host] of [
    [a, 'h1'],
    [a, 'h2'],
    [b, 'h1'],
  ] as const)
    await addAggregateHost(api.pool, agg.uuid, host);
  const r = await sync('--verbose');
  expect([r.code, r.stderr]).toEqual([0, '']);
  expect(r.stdout).toContain(`Successfully added host (h2) and provider (${rp.h2}) to aggregate (${a.uuid}).`);
  expect(await aggregatesOf(rp.h1)).toEqual([a.uuid, b.uuid, other].sort());
  expect(await aggregatesOf(rp.h2)).toEqual([a.uuid]);
  expect((await sync()).code).toBe(0);
  expect(await aggregatesOf(rp.h1)).toEqual([a.uuid, b.uuid, other].sort());
});

test('reports hosts it cannot place as Nova does (unmapped 4, no compute node 5, no provider 6: the last that applies) and places the others', async () => {
  const { aggregate: c } = await createAggregate(api.pool, { name: 'agg-c' });
  for (const host of ['ghost', 'no-node', 'no-provider', 'h2']) await addAggregateHost(api.pool, c.uuid, host);
  const r = await sync();
  expect(r.code).toBe(6);
  expect(r.stdout).toContain(
    'no host mappings were found in the nova API DB. Run "cellsched-manage cell_v2 discover_hosts" and then retry. Missing: ghost',
  );
  expect(r.stdout).toContain('does the nova-compute service on each host need to be restarted? Missing: no-node');
  expect(r.stdout).toContain(
    `Unable to find matching resource provider record in placement with uuid for the following hosts: (no-provider=${rp.noProvider}).`,
  );
  expect(await aggregatesOf(rp.h2)).toContain(c.uuid);
});
