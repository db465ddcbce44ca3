// `cellsched-manage placement audit` as a child process against real databases (API, cell0,
// two cells) and a real placement: what Nova's audit finds, what we find beyond it, what
// --delete removes and what it must leave alone.
import { randomUUID } from 'node:crypto';
import { API_DB_MIGRATIONS_DIR, createBuildRequest, createCellMapping } from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import {
  addPendingProviders,
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  createMigration,
  deleteServices,
  softDeleteInstance,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { computeNodeInventory, ReportClient } from '@cellsched/placement-client';
import { Instance, VmState } from '@cellsched/wire';
import { buildManage, manage } from './cli-support';
import { freePort, placementCall, startPlacement, type PlacementProcess } from './placement-support';

const flavor = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };
const RES = { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 };
let api: TestDatabase;
let cell0: TestDatabase;
let cell1: TestDatabase;
let cell2: TestDatabase;
let placement: PlacementProcess;
const cell1Uuid = randomUUID();
const cell2Uuid = randomUUID();
// compute nodes (= root providers): n1, n2 in cell1, n3 in cell2; `retired` in cell2 is a retired host's node whose
// provider is kept (queued for deletion) while an instance there holds it; `ghost` is a provider no cell knows
const rp = { n1: randomUUID(), n2: randomUUID(), n3: randomUUID(), retired: randomUUID(), ghost: randomUUID() };
// consumers: A-C, H and K are held by something alive; D-G, I, J are orphaned (G only on n1)
const c = {
  A: randomUUID(),
  B: randomUUID(),
  C: randomUUID(),
  D: randomUUID(),
  E: randomUUID(),
  F: randomUUID(),
  G: randomUUID(),
  H: randomUUID(),
  I: randomUUID(),
  J: randomUUID(),
  K: randomUUID(),
};
const audit = (...args: string[]) => manage(['--api-db-url', api.url, '--placement-url', placement.url, 'placement', 'audit', ...args]);
const consumer = async (uuid: string) =>
  Object.keys(
    (await placementCall<{ allocations: Record<string, unknown> }>(placement.url, 'GET', `/allocations/${uuid}`)).body.allocations,
  ).sort();

async function allocate(uuid: string, providers: string[]): Promise<void> {
  const allocations = Object.fromEntries(providers.map((p) => [p, { resources: RES }]));
  const r = await placementCall(
    placement.url,
    'PUT',
    `/allocations/${uuid}`,
    { allocations, project_id: 'p1', user_id: 'u1', consumer_generation: null },
    '1.28',
  );
  if (r.status !== 204) throw new Error(`allocate ${uuid}: ${r.status} ${JSON.stringify(r.body)}`);
}

async function addNode(db: TestDatabase, host: string, uuid: string, report: ReportClient): Promise<number> {
  const { service } = await upsertService(db.pool, { host, binary: 'nova-compute' });
  await upsertComputeNode(db.pool, { uuid, serviceId: service.id, host, hypervisorHostname: host, vcpus: 8, memoryMb: 8192, localGb: 100 });
  await report.ensureResourceProvider(uuid, host);
  await report.setInventory(uuid, computeNodeInventory({ vcpus: 8, memoryMb: 8192, localGb: 100 }));
  return service.id;
}

const instance = (db: TestDatabase, uuid: string, vmState: 'active' | 'building' | 'error', host: string | null) =>
  createInstance(db.pool, { uuid, projectId: 'p1', userId: 'u1', flavor, vmState, host, node: host });

beforeAll(async () => {
  buildManage();
  const make = (prefix: string, kind: 'api' | 'cell') =>
    createTestDatabase({ prefix, kind, migrationsDir: kind === 'api' ? API_DB_MIGRATIONS_DIR : CELL_DB_MIGRATIONS_DIR, poolMax: 2 });
  [api, cell0, cell1, cell2, placement] = await Promise.all([
    make('mng_pa_api', 'api'),
    make('mng_pa_c0', 'cell'),
    make('mng_pa_c1', 'cell'),
    make('mng_pa_c2', 'cell'),
    startPlacement(),
  ]);
  await createCellMapping(api.pool, { uuid: CELL0_UUID, name: 'cell0', transportUrl: 'none:///', databaseConnection: cell0.url });
  await createCellMapping(api.pool, {
    uuid: cell1Uuid,
    name: 'cell1',
    transportUrl: 'amqp://u:p@127.0.0.1/c1',
    databaseConnection: cell1.url,
  });
  await createCellMapping(api.pool, {
    uuid: cell2Uuid,
    name: 'cell2',
    transportUrl: 'amqp://u:p@127.0.0.1/c2',
    databaseConnection: cell2.url,
  });
  const report = new ReportClient({ baseUrl: placement.url });
  await addNode(cell1, 'c1-h1', rp.n1, report);
  await addNode(cell1, 'c1-h2', rp.n2, report);
  await addNode(cell2, 'c2-h1', rp.n3, report);
  await report.ensureResourceProvider(rp.ghost, 'gone-host');
  await report.setInventory(rp.ghost, computeNodeInventory({ vcpus: 8, memoryMb: 8192, localGb: 100 }));

  await instance(cell1, c.A, 'active', 'c1-h1');
  await allocate(c.A, [rp.n1]);
  await instance(cell1, c.B, 'building', 'c1-h2');
  await allocate(c.B, [rp.n1]); // a retry moved its claim before its row
  await createBuildRequest(api.pool, Instance.fromPartial({ uuid: c.C, projectId: 'p1', flavor, vmState: VmState.VM_STATE_BUILDING }));
  await allocate(c.C, [rp.n3]);
  await allocate(c.D, [rp.n1]); // nothing anywhere
  await instance(cell0, c.E, 'error', null);
  await allocate(c.E, [rp.n3]); // buried in cell0
  await instance(cell2, c.F, 'active', 'c2-h1');
  await softDeleteInstance(cell2.pool, c.F);
  await allocate(c.F, [rp.n3]);
  await instance(cell2, c.G, 'active', 'c2-h1');
  await allocate(c.G, [rp.n1, rp.n3]); // on n3 rightly, on n1 not
  const moving = await createMigration(cell1.pool, {
    uuid: c.H,
    instanceUuid: c.A,
    migrationType: 'migration',
    status: 'migrating',
    sourceCompute: 'c1-h2',
    sourceNode: 'c1-h2',
  });
  await allocate(moving.migration.uuid, [rp.n2]);
  await createMigration(cell1.pool, {
    uuid: c.I,
    instanceUuid: randomUUID(),
    migrationType: 'resize',
    status: 'confirmed',
    sourceCompute: 'c1-h2',
    sourceNode: 'c1-h2',
  });
  await allocate(c.I, [rp.n2]);
  await allocate(c.J, [rp.ghost]);
  // a host its compute process no longer serves, retired as the cell conductor does it (service and node soft-deleted, provider queued)
  // while an ACTIVE instance there keeps its allocation on the kept provider
  const retired = await addNode(cell2, 'c2-h9', rp.retired, report);
  await instance(cell2, c.K, 'active', 'c2-h9');
  await allocate(c.K, [rp.retired]);
  await deleteServices(cell2.pool, [retired]);
  await addPendingProviders(cell2.pool, 'c2-compute', [rp.retired]);
}, 180_000);
afterAll(async () => {
  await placement?.stop();
  for (const d of [api, cell0, cell1, cell2] as (TestDatabase | undefined)[]) await d?.drop();
});

const orphanLines = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith('Allocations for consumer UUID'));
const consumersIn = (lines: string[]): string[] =>
  lines
    .map((l) => /consumer UUID (\S+)/.exec(l)?.[1] ?? '')
    .map((u) => Object.entries(c).find(([, v]) => v === u)?.[0] ?? u)
    .sort();

describe('cellsched-manage placement audit', () => {
  it("needs placement's URL (usage error, exit 2)", async () => {
    expect(await manage(['--api-db-url', api.url, 'placement', 'audit'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "cellsched-manage: error: placement's URL is not set: pass --placement-url or set CELLSCHED_PLACEMENT_URL\n",
    });
  });

  it('finds the orphaned allocations in every cell, cell0 included: exit 3, silent without --verbose', async () => {
    expect(await audit()).toEqual({ code: 3, stdout: '', stderr: '' });
    const r = await audit('--verbose');
    expect(r.code).toBe(3);
    const lines = orphanLines(r.stdout);
    expect(consumersIn(lines)).toEqual(['D', 'E', 'F', 'G', 'I', 'J']);
    expect(lines).toContain(
      `Allocations for consumer UUID ${c.G} on Resource Provider ${rp.n1} can be deleted: {'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1}`,
    );
    expect(r.stdout).toContain(
      `Allocations were set against consumer UUID ${c.D} but no existing instances or active migrations are related. `,
    );
    expect(r.stdout).toContain(`Allocations were set against consumer UUID ${c.E} but the instance is in ERROR in cell0`);
    expect(r.stdout).toContain(`Allocations were set against consumer UUID ${c.F} but the instance is deleted (cell2).`);
    expect(r.stdout).toContain(`Allocations were set against consumer UUID ${c.I} but its migration is confirmed.`);
    expect(r.stdout).toContain(`The compute node for UUID ${rp.ghost} can not be found`);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('Processed 6 allocations.');
    expect(r.stderr).toBe('');
  });

  it('--resource_provider audits one provider; an unknown or malformed one is exit 127', async () => {
    const r = await audit('--verbose', '--resource_provider', rp.n3);
    expect(r.code).toBe(3);
    expect(consumersIn(orphanLines(r.stdout))).toEqual(['E', 'F']);
    expect((await audit('--resource_provider', rp.n2)).code).toBe(3);
    const missing = randomUUID();
    expect(await audit('--resource_provider', missing)).toEqual({
      code: 127,
      stdout: `Resource provider with UUID ${missing} does not exist.\n`,
      stderr: '',
    });
    expect((await audit('--resource_provider', 'nope')).code).toBe(127);
  });

  it('placement unreachable: exit 1 with the URL it tried, nothing changed', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const r = await manage(['--api-db-url', api.url, '--placement-url', closed, 'placement', 'audit', '--delete']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^ERROR: placement at ${closed} is unreachable`));
    expect(await consumer(c.D)).toEqual([rp.n1]);
  });

  it('a cell that cannot be read stops the audit before it judges anything (exit 1)', async () => {
    const broken = await createCellMapping(api.pool, {
      name: 'cell3',
      transportUrl: 'amqp://u:p@127.0.0.1/c3',
      databaseConnection: `${cell1.url}_missing`,
    });
    try {
      const r = await audit('--delete');
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^ERROR: cell cell3 \(.*\) could not be read: .*nothing was judged or changed/);
      expect(await consumer(c.D)).toEqual([rp.n1]);
    } finally {
      await api.pool.query('DELETE FROM cell_mappings WHERE uuid = $1', [broken.cell.uuid]);
    }
  });

  it('--delete removes exactly the orphaned allocations (exit 4); a consumer on two providers keeps the rightful one; then exit 0', async () => {
    const r = await audit('--delete', '--verbose');
    expect(r.code).toBe(4);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('Deleted allocations for consumer UUID')).length).toBe(6);
    for (const k of ['D', 'E', 'F', 'I', 'J'] as const) expect([k, await consumer(c[k])]).toEqual([k, []]);
    expect(await consumer(c.G)).toEqual([rp.n3]);
    expect(await consumer(c.A)).toEqual([rp.n1]);
    expect(await consumer(c.B)).toEqual([rp.n1]);
    expect(await consumer(c.C)).toEqual([rp.n3]);
    expect(await consumer(c.H)).toEqual([rp.n2]);
    expect(await consumer(c.K)).toEqual([rp.retired]);
    expect(await audit('--verbose')).toEqual({ code: 0, stdout: `The compute node for UUID ${rp.ghost} can not be found\n`, stderr: '' });
    expect(await audit()).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
