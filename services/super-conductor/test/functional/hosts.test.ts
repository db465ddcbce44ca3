// The super-conductor's host work against real PostgreSQL (API DB, cell0, two cells): delete_service
// (Nova's os-services DELETE: refused while the host is used, else the service, its nodes, its
// aggregates membership, its host mapping and its providers) and the periodic host discovery. The
// placement side is a recording fake (the REST client is exercised against the real placement by
// the cell conductor's functional tests and e2e/boot/hosts.test.ts).
import { randomUUID } from 'node:crypto';
import {
  addAggregateHost,
  addHostMappings,
  API_DB_MIGRATIONS_DIR,
  createAggregate,
  createCellMapping,
  getAggregate,
  getHostMapping,
  listHostMappings,
} from '@cellsched/api-db';
import type { CastContext } from '@cellsched/bus';
import {
  CELL_DB_MIGRATIONS_DIR,
  createInstance,
  getServiceById,
  listComputeNodes,
  listPendingProviders,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import pino from 'pino';
import { CellRegistry } from '../../src/adapters/cells';
import { deleteServiceHandler, type ServiceProviders } from '../../src/adapters/delete-service-handler';
import { discoverHostsOnce } from '../../src/adapters/host-discovery';

const CELL1 = randomUUID();
const CELL2 = randomUUID();
const log = pino({ level: 'silent' });
const ctx = { logger: log } as unknown as CastContext;
let apiDb: TestDatabase;
let cell0Db: TestDatabase;
let cell1Db: TestDatabase;
let cells: CellRegistry;
let cell1Id = 0;
let cell2Id = 0;

/** Placement as the handler sees it: providers in `inUse` hold allocations; every call is recorded. */
class FakeProviders implements ServiceProviders {
  readonly inUse = new Set<string>();
  readonly deleted: string[] = [];
  readonly disabled: string[] = [];
  /** Runs before each delete (a check of what the cell holds at that moment, or a placement outage). */
  onDelete: (uuid: string) => Promise<void> = async () => undefined;
  async deleteResourceProvider(uuid: string): Promise<'deleted' | 'absent' | 'in_use'> {
    await this.onDelete(uuid);
    if (this.inUse.has(uuid)) return 'in_use';
    this.deleted.push(uuid);
    return 'deleted';
  }
  async setComputeStatusDisabled(uuid: string, disabled: boolean): Promise<void> {
    if (disabled) this.disabled.push(uuid);
  }
}

beforeAll(async () => {
  apiDb = await createTestDatabase({ kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, prefix: 'sc_hosts_api' });
  cell0Db = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'sc_hosts_c0' });
  cell1Db = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'sc_hosts_c1' });
  await createCellMapping(apiDb.pool, { uuid: CELL0_UUID, name: 'cell0', transportUrl: 'none:///', databaseConnection: cell0Db.url });
  cell1Id = (
    await createCellMapping(apiDb.pool, {
      uuid: CELL1,
      name: 'cell1',
      transportUrl: 'amqp://x@127.0.0.1/c1',
      databaseConnection: cell1Db.url,
    })
  ).cell.id;
  // a cell this super-conductor cannot open (its database is unreachable): discovery skips it
  cell2Id = (
    await createCellMapping(apiDb.pool, {
      uuid: CELL2,
      name: 'cell2',
      transportUrl: 'amqp://x@127.0.0.1/c2',
      databaseConnection: 'postgres://u:p@127.0.0.1:1/none',
    })
  ).cell.id;
  // NOTE: no bus at all: these handlers only use the cells' databases (variables, so the handles type-check whatever casts CellHandle holds)
  const cell0 = { uuid: CELL0_UUID, name: 'cell0', pool: cell0Db.pool, compute: undefined, conductor: undefined };
  const cell1 = { uuid: CELL1, name: 'cell1', pool: cell1Db.pool, compute: undefined, conductor: undefined };
  // cell2 has a mapping but no handle: the registry fails to open it, so it is never open here
  cells = CellRegistry.fixed(apiDb.pool, [cell0, cell1]);
  await cells.refresh();
}, 60_000);

afterAll(async () => {
  await Promise.all([apiDb?.drop(), cell0Db?.drop(), cell1Db?.drop()]);
});

/** A compute host in cell 1 reported by compute process `proc`, with `nodes` nodes, mapped and in an aggregate. */
async function computeHost(host: string, nodes = 1): Promise<{ uuid: string; nodes: string[]; aggregate: string }> {
  const { service } = await upsertService(cell1Db.pool, { host, binary: 'nova-compute', computeProcess: 'proc-x' });
  const uuids = Array.from({ length: nodes }, () => randomUUID());
  for (const [i, uuid] of uuids.entries())
    await upsertComputeNode(cell1Db.pool, {
      uuid,
      serviceId: service.id,
      host,
      hypervisorHostname: `${host}-n${i}`,
      vcpus: 4,
      memoryMb: 4096,
      localGb: 40,
    });
  await addHostMappings(apiDb.pool, cell1Id, [host]);
  const { aggregate } = await createAggregate(apiDb.pool, { name: `agg-${host}` });
  await addAggregateHost(apiDb.pool, aggregate.uuid, host);
  return { uuid: service.uuid, nodes: uuids, aggregate: aggregate.uuid };
}

const request = (serviceUuid: string, host: string): Parameters<ReturnType<typeof deleteServiceHandler>>[0] => ({
  cellUuid: CELL1,
  serviceUuid,
  host,
  binary: 'nova-compute',
  requestId: 'req-del',
});

describe('delete_service', () => {
  it('deletes the service and its nodes, takes the host out of its aggregates, unmaps it and deletes its providers', async () => {
    const h = await computeHost('del-1', 2);
    const providers = new FakeProviders();
    const handler = deleteServiceHandler({ apiDb: apiDb.pool, cells, providers });
    await handler(request(h.uuid, 'del-1'), ctx);
    expect(await getServiceById(cell1Db.pool, h.uuid)).toBeUndefined();
    expect(await listComputeNodes(cell1Db.pool, { host: 'del-1' })).toEqual([]);
    expect(await getHostMapping(apiDb.pool, 'del-1')).toBeUndefined();
    expect((await getAggregate(apiDb.pool, h.aggregate))?.hosts).toEqual([]);
    expect(providers.deleted.sort()).toEqual([...h.nodes].sort());
    // the service row goes last: a redelivery after the end finds it deleted and does nothing
    await handler(request(h.uuid, 'del-1'), ctx);
    expect(providers.deleted).toHaveLength(2);
  });

  it("works in Nova's order: the providers are deleted while the service is still there, the service row goes last", async () => {
    const h = await computeHost('del-order', 2);
    const providers = new FakeProviders();
    const seen: { live: boolean; aggregates: readonly string[] }[] = [];
    providers.onDelete = async () => {
      seen.push({
        live: (await getServiceById(cell1Db.pool, h.uuid)) !== undefined,
        aggregates: (await getAggregate(apiDb.pool, h.aggregate))?.hosts ?? [],
      });
    };
    await deleteServiceHandler({ apiDb: apiDb.pool, cells, providers })(request(h.uuid, 'del-order'), ctx);
    // Nova: aggregates first, then the providers, then the host mapping, and service.destroy() last
    expect(seen).toEqual([
      { live: true, aggregates: [] },
      { live: true, aggregates: [] },
    ]);
    expect(await getServiceById(cell1Db.pool, h.uuid)).toBeUndefined();
  });

  it('placement failing leaves the service in place (the api does not answer 204); the redelivery finishes the delete', async () => {
    const h = await computeHost('del-flaky', 1);
    const providers = new FakeProviders();
    providers.onDelete = async () => {
      throw new Error('placement unreachable');
    };
    const handler = deleteServiceHandler({ apiDb: apiDb.pool, cells, providers });
    await expect(handler(request(h.uuid, 'del-flaky'), ctx)).rejects.toThrow('placement unreachable');
    expect((await getServiceById(cell1Db.pool, h.uuid))?.deletedAt).toBeNull();
    expect(await listComputeNodes(cell1Db.pool, { host: 'del-flaky' })).toHaveLength(1);
    providers.onDelete = async () => undefined;
    await handler(request(h.uuid, 'del-flaky'), ctx);
    expect(providers.deleted).toEqual(h.nodes);
    expect(await getServiceById(cell1Db.pool, h.uuid)).toBeUndefined();
    expect(await getHostMapping(apiDb.pool, 'del-flaky')).toBeUndefined();
  });

  it("keeps a provider a racing claim still holds, unschedulable, for the cell conductor's sweep", async () => {
    const h = await computeHost('del-2', 1);
    const providers = new FakeProviders();
    providers.inUse.add(h.nodes[0] ?? '');
    await deleteServiceHandler({ apiDb: apiDb.pool, cells, providers })(request(h.uuid, 'del-2'), ctx);
    expect(await getServiceById(cell1Db.pool, h.uuid)).toBeUndefined();
    expect(providers.disabled).toEqual(h.nodes);
    expect((await listPendingProviders(cell1Db.pool, 'proc-x')).get('proc-x')).toEqual(h.nodes);
  });

  it('refuses while the host has an instance: nothing changes anywhere', async () => {
    const h = await computeHost('del-busy', 1);
    await createInstance(cell1Db.pool, {
      uuid: randomUUID(),
      projectId: 'p',
      userId: 'u',
      vmState: 'active',
      host: 'del-busy',
      node: 'del-busy-n0',
      flavor: { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} },
    });
    const providers = new FakeProviders();
    await deleteServiceHandler({ apiDb: apiDb.pool, cells, providers })(request(h.uuid, 'del-busy'), ctx);
    expect((await getServiceById(cell1Db.pool, h.uuid))?.deletedAt).toBeNull();
    expect(await listComputeNodes(cell1Db.pool, { host: 'del-busy' })).toHaveLength(1);
    expect(await getHostMapping(apiDb.pool, 'del-busy')).toMatchObject({ cellUuid: CELL1 });
    expect((await getAggregate(apiDb.pool, h.aggregate))?.hosts).toEqual(['del-busy']);
    expect([providers.deleted, providers.disabled]).toEqual([[], []]);
  });

  it('an unknown service changes nothing', async () => {
    const providers = new FakeProviders();
    await deleteServiceHandler({ apiDb: apiDb.pool, cells, providers })(request(randomUUID(), 'nowhere'), ctx);
    expect(providers.deleted).toEqual([]);
  });
});

describe('periodic host discovery', () => {
  it('maps new compute hosts of the cells it reaches, once; a cell it cannot reach is skipped', async () => {
    const { service } = await upsertService(cell1Db.pool, { host: 'new-1', binary: 'nova-compute' });
    await upsertComputeNode(cell1Db.pool, {
      uuid: randomUUID(),
      serviceId: service.id,
      host: 'new-1',
      hypervisorHostname: 'new-1',
      vcpus: 4,
      memoryMb: 4096,
      localGb: 40,
    });
    expect(await getHostMapping(apiDb.pool, 'new-1')).toBeUndefined();
    expect(await discoverHostsOnce(apiDb.pool, cells, log)).toEqual(['new-1']);
    expect(await getHostMapping(apiDb.pool, 'new-1')).toMatchObject({ cellUuid: CELL1 });
    expect((await listComputeNodes(cell1Db.pool, { host: 'new-1' }))[0]?.mapped).toBe(1);
    expect(await discoverHostsOnce(apiDb.pool, cells, log)).toEqual([]);
    expect((await listHostMappings(apiDb.pool)).filter((m) => m.cellId === cell2Id)).toEqual([]);
  });
});
