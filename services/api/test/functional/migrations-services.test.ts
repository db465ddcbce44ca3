// GET /os-migrations and /servers/{id}/migrations across cells (filters, 2.59 paging), and
// os-services forced_down (2.11 force-down, 2.53 PUT {forced_down}) cast as UpdateService,
// against real PostgreSQL and RabbitMQ (the fake super-conductor records the casts).
import { randomUUID } from 'node:crypto';
import { createCellMapping, setInstanceMappingCell } from '@cellsched/api-db';
import { CELL_DB_MIGRATIONS_DIR, createInstance, createMigration, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
let cell2: TestDatabase | undefined;
let server = '';
const FLAVOR = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };
const uuids: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness('migs');
  // NOTE: the harness's hung cell is not what this file is about: every list would wait for it.
  await h.apiDb.pool.query('DELETE FROM cell_mappings WHERE uuid = $1', [h.cells.down.uuid]);
  cell2 = await createTestDatabase({ kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR, prefix: 'c2_migs' });
  await createCellMapping(h.apiDb.pool, { name: 'cell-b', transportUrl: 'amqp://x@127.0.0.1/cellb', databaseConnection: cell2.url });
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as('alice:p1'),
    payload: { server: { name: 'vm', imageRef: IMAGE, flavorRef: '1' } },
  });
  server = (res.json() as { server: { id: string } }).server.id;
  await createInstance(h.cell1.pool, {
    uuid: server,
    projectId: 'p1',
    userId: 'alice',
    flavor: FLAVOR,
    imageRef: IMAGE,
    vmState: 'active',
    host: 'h1',
    node: 'h1',
  });
  await setInstanceMappingCell(h.apiDb.pool, server, h.cells.cell1.id);
  await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [server]);
  const mig = async (
    db: TestDatabase,
    name: string,
    m: {
      type: 'migration' | 'resize' | 'live-migration' | 'evacuation';
      status: string;
      src: string;
      dst: string;
      instance?: string;
      types?: [number, number];
    },
  ): Promise<void> => {
    const { migration } = await createMigration(db.pool, {
      instanceUuid: m.instance ?? randomUUID(),
      migrationType: m.type,
      status: m.status,
      sourceCompute: m.src,
      sourceNode: m.src,
      destCompute: m.dst,
      destNode: m.dst,
      userId: 'alice',
      projectId: 'p1',
      oldInstanceTypeId: m.types?.[0],
      newInstanceTypeId: m.types?.[1],
    });
    uuids[name] = migration.uuid;
  };
  await mig(h.cell1, 'cold', { type: 'migration', status: 'finished', src: 'h1', dst: 'h2', types: [2, 2] });
  await mig(h.cell1, 'live', { type: 'live-migration', status: 'running', src: 'h1', dst: 'h3', instance: server, types: [1, 1] });
  await mig(h.cell1, 'liveDone', { type: 'live-migration', status: 'completed', src: 'h3', dst: 'h1', instance: server });
  await mig(cell2, 'evac', { type: 'evacuation', status: 'done', src: 'x1', dst: 'x2' });
  for (const [db, host] of [
    [h.cell1, 'h1'],
    [cell2, 'x1'],
    [h.cell1, 'sched'],
  ] as const) {
    const { service } = await upsertService(db.pool, {
      host,
      binary: host === 'sched' ? 'nova-scheduler' : 'nova-compute',
      topic: 'compute',
    });
    if (host !== 'sched')
      await upsertComputeNode(db.pool, {
        uuid: randomUUID(),
        serviceId: service.id,
        host,
        hypervisorHostname: host,
        vcpus: 4,
        memoryMb: 4096,
        localGb: 10,
      });
  }
}, 120_000);
afterAll(async () => {
  await h?.close();
  await cell2?.drop();
});

const get = (url: string, version = '2.60', token = 'admin'): ReturnType<Harness['inject']> =>
  h.inject({ url, headers: as(token, version) });
type Mig = Record<string, unknown>;
const listOf = async (url: string, version?: string): Promise<{ migrations: Mig[]; migrations_links?: { href: string }[] }> =>
  (await get(url, version)).json() as never;

describe('GET /os-migrations', () => {
  it("is admin only and lists every cell, newest first, in the version's shape", async () => {
    expect((await get('/v2.1/os-migrations', '2.60', 'alice:p1')).statusCode).toBe(403);
    const all = await listOf('/v2.1/os-migrations');
    expect(all.migrations.map((m) => m.uuid)).toEqual([uuids.evac, uuids.liveDone, uuids.live, uuids.cold]);
    expect(all.migrations_links).toBeUndefined();
    const old = await listOf('/v2.1/os-migrations', '2.1');
    expect(Object.keys(old.migrations[0] ?? {}).sort()).toEqual([
      'created_at',
      'dest_compute',
      'dest_host',
      'dest_node',
      'id',
      'instance_uuid',
      'new_instance_type_id',
      'old_instance_type_id',
      'source_compute',
      'source_node',
      'status',
      'updated_at',
    ]);
    const live = (await listOf('/v2.1/os-migrations?migration_type=live-migration', '2.23')).migrations;
    expect(live.find((m) => m.status === 'running')?.links).toEqual([
      { rel: 'self', href: `${h.base}/v2.1/servers/${server}/migrations/${String(live.find((m) => m.status === 'running')?.id)}` },
      { rel: 'bookmark', href: `${h.base}/servers/${server}/migrations/${String(live.find((m) => m.status === 'running')?.id)}` },
    ]);
    expect(live.find((m) => m.status === 'completed')?.links).toBeUndefined();
  });

  it("shows the flavors' integer ids each migration recorded (Nova's old/new_instance_type_id), null where none was", async () => {
    const byUuid = new Map(
      (await listOf('/v2.1/os-migrations')).migrations.map((m) => [m.uuid, [m.old_instance_type_id, m.new_instance_type_id]]),
    );
    expect(byUuid.get(uuids.cold)).toEqual([2, 2]);
    expect(byUuid.get(uuids.live)).toEqual([1, 1]);
    expect(byUuid.get(uuids.evac)).toEqual([null, null]);
  });

  it('filters by host, source_compute, status, instance_uuid, migration_type', async () => {
    const uuidsOf = async (q: string): Promise<unknown[]> => (await listOf(`/v2.1/os-migrations?${q}`)).migrations.map((m) => m.uuid);
    expect(await uuidsOf('host=h1')).toEqual([uuids.liveDone, uuids.live, uuids.cold]);
    expect(await uuidsOf('source_compute=h1')).toEqual([uuids.live, uuids.cold]);
    expect(await uuidsOf('status=done')).toEqual([uuids.evac]);
    expect(await uuidsOf(`instance_uuid=${server}`)).toEqual([uuids.liveDone, uuids.live]);
    expect(await uuidsOf('migration_type=migration')).toEqual([uuids.cold]);
    expect(await uuidsOf('changes-since=2000-01-01T00:00:00Z&status=finished')).toEqual([uuids.cold]);
    expect(await uuidsOf('changes-since=2999-01-01T00:00:00Z')).toEqual([]);
  });

  it('2.59: pages with limit and marker across cells, with a next link; bad marker or key is a 400', async () => {
    const first = await listOf('/v2.1/os-migrations?limit=3');
    expect(first.migrations.map((m) => m.uuid)).toEqual([uuids.evac, uuids.liveDone, uuids.live]);
    expect(first.migrations_links).toEqual([{ rel: 'next', href: `${h.base}/v2.1/os-migrations?limit=3&marker=${uuids.live}` }]);
    const second = await listOf(`/v2.1/os-migrations?limit=3&marker=${uuids.live}`);
    expect(second.migrations.map((m) => m.uuid)).toEqual([uuids.cold]);
    expect(second.migrations_links).toBeUndefined();
    const marker = randomUUID();
    expect((await get(`/v2.1/os-migrations?marker=${marker}`)).json()).toEqual({
      badRequest: { code: 400, message: `Marker ${marker} could not be found.` },
    });
    expect((await get('/v2.1/os-migrations?bogus=1')).statusCode).toBe(400);
    expect((await get('/v2.1/os-migrations?bogus=1', '2.58')).statusCode).toBe(200);
    expect((await listOf('/v2.1/os-migrations?limit=0')).migrations).toEqual([]);
  });
});

describe('GET /servers/{id}/migrations', () => {
  it("lists the in-progress live migrations (2.23+) and shows one, with Nova's 404s", async () => {
    expect((await get(`/v2.1/servers/${server}/migrations`, '2.22')).statusCode).toBe(404);
    const list = (await get(`/v2.1/servers/${server}/migrations`)).json() as { migrations: Mig[] };
    expect(list.migrations.map((m) => [m.uuid, m.status, m.server_uuid])).toEqual([[uuids.live, 'running', server]]);
    const id = String(list.migrations[0]?.id);
    expect(((await get(`/v2.1/servers/${server}/migrations/${id}`)).json() as { migration: Mig }).migration).toMatchObject({
      uuid: uuids.live,
      memory_total_bytes: null,
    });
    const all = (await listOf(`/v2.1/os-migrations?instance_uuid=${server}`)).migrations;
    const done = String(all.find((m) => m.status === 'completed')?.id);
    expect((await get(`/v2.1/servers/${server}/migrations/${done}`)).json()).toEqual({
      itemNotFound: { code: 404, message: `Live migration ${done} for server ${server} is not in progress.` },
    });
    expect((await get(`/v2.1/servers/${server}/migrations/999999`)).statusCode).toBe(404);
    expect((await get(`/v2.1/servers/${server}/migrations`, '2.60', 'alice:p1')).statusCode).toBe(403);
  });
});

describe('os-services forced_down', () => {
  const put = (path: string, body: unknown, version: string): ReturnType<Harness['inject']> =>
    h.inject({ method: 'PUT', url: `/v2.1/os-services/${path}`, headers: as('admin', version), payload: body });
  const serviceOf = async (host: string): Promise<Record<string, unknown>> =>
    ((await get(`/v2.1/os-services?host=${host}`, '2.60')).json() as { services: Record<string, unknown>[] }).services[0] ?? {};

  it('2.11 force-down casts forced_down only; unknown before 2.11; other binaries refused', async () => {
    expect((await put('force-down', { host: 'h1', binary: 'nova-compute', forced_down: true }, '2.10')).statusCode).toBe(404);
    const res = await put('force-down', { host: 'h1', binary: 'nova-compute', forced_down: true }, '2.11');
    expect(res.json()).toEqual({ service: { host: 'h1', binary: 'nova-compute', forced_down: true } });
    expect(await waitFor('update_service', () => h.seen.services.find((s) => s.host === 'h1'))).toMatchObject({
      forcedDown: true,
      onlyForcedDown: true,
      cellUuid: h.cells.cell1.uuid,
    });
    expect((await put('force-down', { host: 'h1', binary: 'nova-compute' }, '2.11')).json()).toEqual({
      badRequest: { code: 400, message: 'Missing forced_down field' },
    });
    expect((await put('force-down', { host: 'sched', binary: 'nova-scheduler', forced_down: true }, '2.11')).json()).toEqual({
      badRequest: { code: 400, message: 'Updating a nova-scheduler service is not supported. Only nova-compute services can be updated.' },
    });
  });

  it('2.53 PUT {forced_down} answers the service as down; nothing to update is a 400; no force-up over done evacuations', async () => {
    const svc = await serviceOf('h1');
    const res = await put(String(svc.id), { forced_down: true }, '2.53');
    expect(res.statusCode).toBe(200);
    expect((res.json() as { service: Record<string, unknown> }).service).toMatchObject({
      id: svc.id,
      forced_down: true,
      state: 'down',
      status: 'enabled',
    });
    const cast = await waitFor('the cast', () => h.seen.services.filter((s) => s.host === 'h1')[1]);
    expect(cast).toMatchObject({ forcedDown: true, onlyForcedDown: true });
    const both = await put(String(svc.id), { status: 'disabled', disabled_reason: 'dead', forced_down: 'false' }, '2.53');
    expect((both.json() as { service: Record<string, unknown> }).service).toMatchObject({
      status: 'disabled',
      disabled_reason: 'dead',
      forced_down: false,
    });
    expect(await waitFor('the cast', () => h.seen.services.filter((s) => s.host === 'h1')[2])).toMatchObject({
      disabled: true,
      disabledReason: 'dead',
      forcedDown: false,
    });
    expect((await put(String(svc.id), {}, '2.53')).json()).toEqual({
      badRequest: { code: 400, message: "No updates were requested. Fields 'status' or 'forced_down' should be specified." },
    });
    expect((await put(String(svc.id), { status: 'enabled', disabled_reason: 'x' }, '2.53')).json()).toEqual({
      badRequest: { code: 400, message: "Specifying 'disabled_reason' with status 'enabled' is invalid." },
    });
    const evacuated = await serviceOf('x1');
    expect((await put(String(evacuated.id), { forced_down: false }, '2.53')).json()).toEqual({
      badRequest: {
        code: 400,
        message:
          'Unable to force up host x1 as `done` evacuation migration records remain associated with the host. Ensure the compute service has been restarted, allowing these records to move to `completed` before retrying this request.',
      },
    });
    expect((await put(String(evacuated.id), { forced_down: true }, '2.53')).statusCode).toBe(200);
  });

  it('answers once the cell shows the change (Nova writes it synchronously): the next request finds the host down; not applied in time is a 503', async () => {
    const svc = await serviceOf('h1');
    await put(String(svc.id), { forced_down: false, status: 'enabled' }, '2.53');
    const down = await put('force-down', { host: 'h1', binary: 'nova-compute', forced_down: true }, '2.11');
    expect(down.json()).toEqual({ service: { host: 'h1', binary: 'nova-compute', forced_down: true } });
    // no waiting: the very next read shows it, as an evacuate right after the force-down needs
    expect(await serviceOf('h1')).toMatchObject({ forced_down: true, state: 'down' });
    const disabled = await put('disable-log-reason', { host: 'h1', binary: 'nova-compute', disabled_reason: 'maintenance' }, '2.11');
    expect(disabled.json()).toEqual({
      service: { host: 'h1', binary: 'nova-compute', status: 'disabled', disabled_reason: 'maintenance' },
    });
    expect(await serviceOf('h1')).toMatchObject({ status: 'disabled', disabled_reason: 'maintenance', forced_down: true });
    const deps = h.deps as { serviceWriteWaitMs?: number };
    deps.serviceWriteWaitMs = 600;
    h.stalledServiceHosts.add('h1');
    try {
      const late = await put(String(svc.id), { forced_down: false, status: 'enabled' }, '2.53');
      expect(late.statusCode).toBe(503);
      expect(late.json()).toEqual({
        serviceUnavailable: {
          code: 503,
          message: `The update of service ${String(svc.id)} (host h1) was accepted but not applied in time; it is applied when the conductor gets to it. Check the service list again later.`,
        },
      });
      expect(await serviceOf('h1')).toMatchObject({ status: 'disabled', forced_down: true });
    } finally {
      h.stalledServiceHosts.delete('h1');
      delete deps.serviceWriteWaitMs;
    }
  });
});
