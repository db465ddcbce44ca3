// Hosts that stop existing: services of a compute process that no longer serves them, a deleted
// service staying deleted, and what still uses a host (os-services DELETE refuses then).
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  addPendingProviders,
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  createMigration,
  deleteServices,
  forgetPendingProviders,
  getService,
  getServiceById,
  hostUsage,
  listComputeNodes,
  listPendingProviders,
  listServicesNotServedBy,
  markComputeNodesMapped,
  recordComputeProcessRun,
  recordServiceHeartbeats,
  removePendingProviders,
  softDeleteInstance,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'celldb_retire', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

async function host(name: string, computeProcess?: string): Promise<{ id: number; uuid: string; node: string }> {
  const { service } = await upsertService(db.pool, {
    host: name,
    binary: 'nova-compute',
    ...(computeProcess === undefined ? {} : { computeProcess }),
  });
  const { node } = await upsertComputeNode(db.pool, {
    uuid: randomUUID(),
    serviceId: service.id,
    host: name,
    hypervisorHostname: name,
    vcpus: 4,
    memoryMb: 4096,
    localGb: 40,
  });
  return { id: service.id, uuid: service.uuid, node: node.uuid };
}

const FLAVOR = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };

describe('compute process runs', () => {
  it('a later run wins; a report of an earlier run is stale; a repeat of the current run is current', async () => {
    expect(await recordComputeProcessRun(db.pool, 'p-run', 1000)).toBe('current');
    expect(await recordComputeProcessRun(db.pool, 'p-run', 1000)).toBe('current');
    expect(await recordComputeProcessRun(db.pool, 'p-run', 2000)).toBe('current');
    expect(await recordComputeProcessRun(db.pool, 'p-run', 1000)).toBe('stale');
    await expect(recordComputeProcessRun(db.pool, '', 1)).rejects.toMatchObject({ code: 'cell_db.compute_process.invalid' });
    await expect(recordComputeProcessRun(db.pool, 'p-run', -1)).rejects.toMatchObject({ code: 'cell_db.compute_process.invalid' });
  });
});

describe('services a process no longer serves', () => {
  it("lists only that process's live services whose host left its set", async () => {
    await host('r1', 'proc-a');
    await host('r2', 'proc-a');
    await host('r3', 'proc-a');
    await host('r4', 'proc-b');
    await host('r5');
    expect((await listServicesNotServedBy(db.pool, 'proc-a', ['r1'])).map((s) => s.host)).toEqual(['r2', 'r3']);
    // a host that moved to another process is that process's now
    await upsertService(db.pool, { host: 'r3', binary: 'nova-compute', computeProcess: 'proc-b' });
    expect((await listServicesNotServedBy(db.pool, 'proc-a', ['r1'])).map((s) => s.host)).toEqual(['r2']);
    // a report without a process keeps the one recorded
    await upsertService(db.pool, { host: 'r2', binary: 'nova-compute' });
    expect((await listServicesNotServedBy(db.pool, 'proc-a', ['r1'])).map((s) => s.host)).toEqual(['r2']);
  });
});

describe('deleting services', () => {
  it('soft-deletes services and their nodes at once, unmaps the nodes, and is idempotent', async () => {
    const a = await host('d-a', 'proc-d');
    const b = await host('d-b', 'proc-d');
    await markComputeNodesMapped(db.pool, ['d-a', 'd-b']);
    const gone = await deleteServices(db.pool, [a.id, b.id, 999999]);
    expect(gone.services).toEqual([
      { id: a.id, host: 'd-a' },
      { id: b.id, host: 'd-b' },
    ]);
    expect([...gone.nodeUuids].sort()).toEqual([a.node, b.node].sort());
    expect(await deleteServices(db.pool, [a.id])).toEqual({ services: [], nodeUuids: [] });
    expect(await listComputeNodes(db.pool, { host: 'd-a' })).toEqual([]);
    expect(
      (await listComputeNodes(db.pool, { serviceId: a.id, includeDeleted: true })).map((n) => [n.uuid, n.mapped, n.deletedAt !== null]),
    ).toEqual([[a.node, 0, true]]);
    expect(await listServicesNotServedBy(db.pool, 'proc-d', [])).toEqual([]);
    // heartbeats of a deleted service change nothing
    expect(await recordServiceHeartbeats(db.pool, ['d-a'], 'nova-compute')).toEqual(['d-a']);
  });

  it('a host that comes back is a new service: new id and uuid, the deleted row stays deleted', async () => {
    const old = await host('back-1', 'proc-e');
    await deleteServices(db.pool, [old.id]);
    const { service, created } = await upsertService(db.pool, { host: 'back-1', binary: 'nova-compute', computeProcess: 'proc-e' });
    expect(created).toBe(true);
    expect(service.id).not.toBe(old.id);
    expect(service.uuid).not.toBe(old.uuid);
    expect(await getServiceById(db.pool, old.uuid)).toBeUndefined();
    expect((await getServiceById(db.pool, old.uuid, { includeDeleted: true }))?.deletedAt).toBeInstanceOf(Date);
    expect((await getService(db.pool, 'back-1', 'nova-compute'))?.id).toBe(service.id);
    // the node (same uuid: name-based in the computes) comes back unmapped, under the new service
    const { node } = await upsertComputeNode(db.pool, {
      uuid: old.node,
      serviceId: service.id,
      host: 'back-1',
      hypervisorHostname: 'back-1',
      vcpus: 4,
      memoryMb: 4096,
      localGb: 40,
    });
    expect([node.deletedAt, node.mapped, node.serviceId]).toEqual([null, 0, service.id]);
  });
});

describe('pending providers of retired nodes', () => {
  it('are added once, listed per process and removed when gone', async () => {
    const [u1, u2, u3] = [randomUUID(), randomUUID(), randomUUID()];
    await addPendingProviders(db.pool, 'proc-p', [u1 as string, u2 as string]);
    await addPendingProviders(db.pool, 'proc-p', [u2 as string, u3 as string]);
    expect((await listPendingProviders(db.pool, 'proc-p')).get('proc-p')).toEqual([u1, u2, u3].sort());
    await removePendingProviders(db.pool, 'proc-p', [u1 as string, u3 as string]);
    expect(await listPendingProviders(db.pool)).toEqual(new Map([['proc-p', [u2]]]));
    await removePendingProviders(db.pool, 'proc-p', [u2 as string]);
    expect(await listPendingProviders(db.pool)).toEqual(new Map());
    // a provider whose host came back is forgotten wherever it is queued
    await addPendingProviders(db.pool, 'proc-p', [u1 as string, u2 as string]);
    await addPendingProviders(db.pool, 'proc-q', [u1 as string]);
    await forgetPendingProviders(db.pool, [u1 as string]);
    expect(await listPendingProviders(db.pool)).toEqual(new Map([['proc-p', [u2]]]));
  });
});

describe('host usage', () => {
  it("counts undeleted instances of any state and in-progress migrations on the host's nodes", async () => {
    await host('u-1');
    expect(await hostUsage(db.pool, 'u-1', ['u-1'])).toEqual({ instances: 0, migrations: [] });
    const i1 = randomUUID();
    await createInstance(db.pool, { uuid: i1, projectId: 'p', userId: 'u', flavor: FLAVOR, vmState: 'error', host: 'u-1', node: 'u-1' });
    expect((await hostUsage(db.pool, 'u-1', ['u-1'])).instances).toBe(1);
    await softDeleteInstance(db.pool, i1);
    expect((await hostUsage(db.pool, 'u-1', ['u-1'])).instances).toBe(0);
    const m = randomUUID();
    await createMigration(db.pool, {
      uuid: m,
      instanceUuid: randomUUID(),
      sourceCompute: 'x',
      sourceNode: 'x',
      destCompute: 'u-1',
      destNode: 'u-1',
      migrationType: 'migration',
      status: 'migrating',
    });
    await createMigration(db.pool, {
      uuid: randomUUID(),
      instanceUuid: randomUUID(),
      sourceCompute: 'u-1',
      sourceNode: 'u-1',
      destCompute: 'y',
      destNode: 'y',
      migrationType: 'resize',
      status: 'confirmed',
    });
    expect(await hostUsage(db.pool, 'u-1', ['u-1'])).toEqual({ instances: 0, migrations: [`${m}:migrating`] });
  });
});
