// POST/GET/DELETE /servers against real PostgreSQL (API DB, cell0, cell1, a hung cell) and
// a real RabbitMQ vhost where a fake super-conductor records the casts.
import { getBuildRequest, getInstanceMapping, getRequestSpec, setInstanceMappingCell } from '@cellsched/api-db';
import {
  addInstanceFault,
  createInstance,
  recordServiceHeartbeat,
  setServiceDisabled,
  setServiceForcedDown,
  softDeleteInstance,
  upsertService,
} from '@cellsched/cell-db';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('servers');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const body = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  server: { name: 'vm', imageRef: IMAGE, flavorRef: '1', ...extra },
});
const TINY = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };

async function counts(): Promise<number[]> {
  const tables = ['build_requests', 'request_specs', 'instance_mappings'];
  return Promise.all(
    tables.map(async (t) => Number((await h.apiDb.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`)).rows[0]?.n)),
  );
}

async function create(token = 'alice:p1', payload: unknown = body(), version?: string): Promise<string> {
  const res = await h.inject({ method: 'POST', url: '/v2.1/servers', headers: as(token, version), payload });
  expect(res.statusCode).toBe(202);
  return (res.json() as { server: { id: string } }).server.id;
}

/** Puts a server in a cell as the super-conductor would (test-only write to the cell DB). */
async function placeInCell(uuid: string, projectId: string, vmState: 'active' | 'error', cell: 'cell1' | 'down' = 'cell1'): Promise<void> {
  if (cell === 'cell1') {
    await createInstance(h.cell1.pool, {
      uuid,
      projectId,
      userId: 'alice',
      displayName: `srv-${uuid.slice(0, 4)}`,
      flavor: TINY,
      imageRef: IMAGE,
      vmState,
      host: 'host-a',
      node: 'node-a',
      availabilityZone: 'nova',
    });
  }
  await setInstanceMappingCell(h.apiDb.pool, uuid, h.cells[cell].id);
  await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [uuid]);
}

describe('POST /v2.1/servers', () => {
  it('answers 202, writes spec, build request and cell-less mapping in one go, and casts schedule_and_build_instances', async () => {
    const before = h.seen.schedule.length;
    const res = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1'),
      payload: body({ availability_zone: 'nova' }),
    });
    expect(res.statusCode).toBe(202);
    const { server } = res.json() as { server: { id: string; links: { rel: string; href: string }[] } };
    expect(res.headers.location).toBe(`${h.base}/v2.1/servers/${server.id}`);
    const mapping = await getInstanceMapping(h.apiDb.pool, server.id);
    expect(mapping).toMatchObject({ projectId: 'p1', userId: 'alice', cell: undefined });
    expect((await getBuildRequest(h.apiDb.pool, server.id))?.instance).toMatchObject({
      displayName: 'vm',
      taskState: 'scheduling',
      availabilityZone: 'nova',
    });
    expect((await getRequestSpec(h.apiDb.pool, server.id))?.flavor?.flavorid).toBe('1');
    const cast = await waitFor('the cast', () => h.seen.schedule.slice(before).find((c) => c.requestSpec?.instanceUuid === server.id));
    // 1.6: the instance as written travels with the first cast (the super-conductor does not read it back)
    expect(cast.buildRequests).toEqual([
      { instanceUuid: server.id, displayName: 'vm', launchIndex: 0, instance: (await getBuildRequest(h.apiDb.pool, server.id))?.instance },
    ]);
    expect(cast.buildRequests[0]?.instance).toMatchObject({ uuid: server.id, displayName: 'vm', projectId: 'p1', taskState: 'scheduling' });
    expect(cast.requestSpec).toMatchObject({
      projectId: 'p1',
      userId: 'alice',
      numInstances: 1,
      availabilityZone: 'nova',
      image: { id: IMAGE },
    });
    expect(cast.requestId).toMatch(/^req-/);
  });

  it('multi-create is one cast and answers the reservation id when asked', async () => {
    const before = h.seen.schedule.length;
    const res = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1'),
      payload: body({ min_count: 2, max_count: 3, return_reservation_id: true }),
    });
    expect(res.statusCode).toBe(202);
    const { reservation_id: rid } = res.json() as { reservation_id: string };
    expect(rid).toMatch(/^r-[a-z0-9]{8}$/);
    const cast = await waitFor('the cast', () => h.seen.schedule[before]);
    expect(cast.buildRequests.map((b) => [b.displayName, b.launchIndex])).toEqual([
      ['vm-1', 0],
      ['vm-2', 1],
      ['vm-3', 2],
    ]);
    expect(cast.requestSpec?.numInstances).toBe(3);
    await new Promise((r) => setTimeout(r, 200));
    expect(h.seen.schedule.length).toBe(before + 1);
  });

  it.each([
    ['no server', {}, "'server' is a required property"],
    ['no name', { server: { imageRef: IMAGE, flavorRef: '1' } }, "'name' is a required property"],
    ['no flavorRef', { server: { name: 'x', imageRef: IMAGE } }, "'flavorRef' is a required property"],
    ['unknown flavor', body({ flavorRef: '999' }), 'Invalid flavorRef provided.'],
    ['bad imageRef', body({ imageRef: 'not-a-uuid' }), 'Invalid imageRef provided.'],
    [
      'unknown image',
      body({ imageRef: '11111111-2222-3333-4444-555555555555' }),
      'Image 11111111-2222-3333-4444-555555555555 could not be found.',
    ],
    ['min > max', body({ min_count: 3, max_count: 2 }), 'min_count must be <= max_count'],
    ['bad count', body({ min_count: 0 }), 'Invalid input for field/attribute min_count'],
    ['unknown AZ', body({ availability_zone: 'mars' }), 'The requested availability zone is not available'],
    ['unknown property', body({ colour: 'red' }), "Additional properties are not allowed ('colour' was unexpected)"],
  ])('%s → 400 with a clear message and nothing written', async (_what, payload, message) => {
    const before = await counts();
    const casts = h.seen.schedule.length;
    const res = await h.inject({ method: 'POST', url: '/v2.1/servers', headers: as('alice:p1'), payload });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { badRequest: { code: number; message: string } }).badRequest).toMatchObject({ code: 400 });
    expect((res.json() as { badRequest: { message: string } }).badRequest.message).toContain(message);
    expect(await counts()).toEqual(before);
    expect(h.seen.schedule.length).toBe(casts);
  });

  it('an unknown server group in the hints is a 400', async () => {
    const res = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1'),
      payload: { ...body(), 'os:scheduler_hints': { group: '11111111-2222-3333-4444-555555555555' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      badRequest: { code: 400, message: 'Instance group 11111111-2222-3333-4444-555555555555 could not be found.' },
    });
  });

  it('requires networks "none"/"auto" from 2.37 and accepts them', async () => {
    const missing = await h.inject({ method: 'POST', url: '/v2.1/servers', headers: as('alice:p1', '2.37'), payload: body() });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain("'networks' is a required property");
    await create('alice:p1', body({ networks: 'none' }), '2.37');
    const old = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1', '2.36'),
      payload: body({ networks: 'none' }),
    });
    expect(old.statusCode).toBe(400);
  });
});

describe('GET /v2.1/servers', () => {
  it('shows a server from its BuildRequest before it has a cell, then from its cell', async () => {
    const id = await create('alice:p1', body({ name: 'early' }));
    const early = await h.inject({ url: `/v2.1/servers/${id}`, headers: as('alice:p1', '2.47') });
    expect(early.statusCode).toBe(200);
    expect((early.json() as { server: Record<string, unknown> }).server).toMatchObject({
      id,
      name: 'early',
      status: 'BUILD',
      tenant_id: 'p1',
      'OS-EXT-STS:task_state': 'scheduling',
      flavor: { original_name: 'm1.tiny', ram: 512 },
    });
    await placeInCell(id, 'p1', 'active');
    const later = (await h.inject({ url: `/v2.1/servers/${id}`, headers: as('admin') })).json() as { server: Record<string, unknown> };
    expect(later.server).toMatchObject({
      id,
      status: 'ACTIVE',
      'OS-EXT-SRV-ATTR:host': 'host-a',
      'OS-EXT-SRV-ATTR:hypervisor_hostname': 'node-a',
      'OS-EXT-AZ:availability_zone': 'nova',
    });
    const member = (await h.inject({ url: `/v2.1/servers/${id}`, headers: as('alice:p1') })).json() as { server: Record<string, unknown> };
    expect(member.server['OS-EXT-SRV-ATTR:host']).toBeUndefined();
    expect(member.server.flavor).toEqual({ id: '1', links: [{ rel: 'bookmark', href: `${h.base}/flavors/1` }] });
  });

  it('shows the fault of an ERROR server', async () => {
    const id = await create('alice:p1');
    await placeInCell(id, 'p1', 'error');
    await addInstanceFault(h.cell1.pool, {
      instanceUuid: id,
      code: 500,
      message: 'No valid host was found. ',
      details: 'filters: RamFilter removed 3',
    });
    const member = (await h.inject({ url: `/v2.1/servers/${id}`, headers: as('alice:p1') })).json() as {
      server: { status: string; fault: Record<string, unknown> };
    };
    expect(member.server.status).toBe('ERROR');
    expect(member.server.fault).toMatchObject({ code: 500, message: 'No valid host was found. ' });
    expect(member.server.fault.details).toBeUndefined();
    const admin = (await h.inject({ url: `/v2.1/servers/${id}`, headers: as('admin') })).json() as {
      server: { fault: Record<string, unknown> };
    };
    expect(admin.server.fault.details).toBe('filters: RamFilter removed 3');
  });

  describe('a cell that does not answer (Nova 2.69 down-cell support)', () => {
    let inCell: string;
    let inDown: string;
    let building: string;
    beforeAll(async () => {
      inCell = await create('bob:p2', body({ name: 'b-cell' }));
      await placeInCell(inCell, 'p2', 'active');
      inDown = await create('bob:p2', body({ name: 'b-down', availability_zone: 'nova' }));
      await placeInCell(inDown, 'p2', 'active', 'down');
      building = await create('bob:p2', body({ name: 'b-build' }));
    });
    const listed = async (url: string, token = 'bob:p2', version?: string): Promise<Record<string, unknown>[]> => {
      const started = Date.now();
      const res = await h.inject({ url, headers: as(token, version) });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(res.statusCode).toBe(200);
      expect(res.headers).not.toHaveProperty('x-cellsched-down-cells');
      return (res.json() as { servers: Record<string, unknown>[] }).servers;
    };

    it('below 2.69 lists skip its servers; the others answer', async () => {
      for (const url of ['/v2.1/servers/detail', '/v2.1/servers']) {
        expect((await listed(url, 'bob:p2', '2.68')).map((s) => s.id).sort()).toEqual([building, inCell].sort());
      }
      expect((await listed('/v2.1/servers/detail')).map((s) => s.id)).not.toContain(inDown);
    });

    it("from 2.69 lists show them first as minimal records in Nova's documented shape", async () => {
      const detail = await listed('/v2.1/servers/detail', 'bob:p2', '2.69');
      expect(detail.map((s) => [s.id, s.status])).toEqual([
        [inDown, 'UNKNOWN'],
        [building, 'BUILD'],
        [inCell, 'ACTIVE'],
      ]);
      expect(detail[0]).toEqual({
        id: inDown,
        status: 'UNKNOWN',
        tenant_id: 'p2',
        created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        links: [
          { rel: 'self', href: `${h.base}/v2.1/servers/${inDown}` },
          { rel: 'bookmark', href: `${h.base}/servers/${inDown}` },
        ],
      });
      const index = await listed('/v2.1/servers', 'bob:p2', '2.69');
      expect(index[0]).toEqual({ id: inDown, status: 'UNKNOWN', links: detail[0]?.links });
      expect(
        index
          .slice(1)
          .map((s) => s.name)
          .sort(),
      ).toEqual(['b-build', `srv-${inCell.slice(0, 4)}`].sort());
      // other projects' servers in the down cell are not shown; all_tenants (admin) is the one filter allowed
      expect((await listed('/v2.1/servers', 'dave:p4', '2.69')).map((s) => s.id)).not.toContain(inDown);
      expect((await listed('/v2.1/servers?all_tenants=1', 'admin', '2.69')).map((s) => s.id)).toContain(inDown);
      // a member's unknown keys are dropped as in Nova: still no filter
      expect((await listed('/v2.1/servers?host=x', 'bob:p2', '2.69')).map((s) => s.id)).toContain(inDown);
    });

    it('from 2.69 a filter, paging or sorting skips them (they cannot be judged)', async () => {
      const queries = [
        'limit=100',
        'marker=' + building,
        'sort_key=display_name',
        'name=b-',
        'status=ACTIVE',
        'changes-since=2000-01-01T00:00:00Z',
      ];
      for (const q of queries) expect((await listed(`/v2.1/servers/detail?${q}`, 'bob:p2', '2.69')).map((s) => s.id)).not.toContain(inDown);
      expect((await listed('/v2.1/servers?all_tenants=1&project_id=p2', 'admin', '2.69')).map((s) => s.id)).not.toContain(inDown);
    });

    it("GET /servers/{id}: Nova's 500 below 2.69, the minimal record with its RequestSpec from 2.69", async () => {
      const old = await h.inject({ url: `/v2.1/servers/${inDown}`, headers: as('bob:p2', '2.68') });
      expect(old.statusCode).toBe(500);
      expect(old.json()).toEqual({
        computeFault: {
          code: 500,
          message: expect.stringMatching(/^Unexpected API Error\. .*\n<class 'nova\.exception\.NovaException'>$/s),
        },
      });
      const res = await h.inject({ url: `/v2.1/servers/${inDown}`, headers: as('bob:p2', '2.69') });
      expect(res.statusCode).toBe(200);
      expect((res.json() as { server: unknown }).server).toEqual({
        id: inDown,
        status: 'UNKNOWN',
        tenant_id: 'p2',
        user_id: 'bob',
        created: expect.any(String),
        links: expect.any(Array),
        image: { id: IMAGE, links: [{ rel: 'bookmark', href: `${h.base}/images/${IMAGE}` }] },
        flavor: { vcpus: 1, ram: 512, disk: 1, ephemeral: 0, swap: 0, original_name: 'm1.tiny', extra_specs: {} },
        'OS-EXT-AZ:availability_zone': 'nova',
        'OS-EXT-STS:power_state': 0,
      });
      // no zone asked for at boot: "UNKNOWN"; a server being deleted: 404 (Nova treats it as deleted)
      const noZone = await create('bob:p2', body({ name: 'b-down-2' }));
      await placeInCell(noZone, 'p2', 'active', 'down');
      const shown = (await h.inject({ url: `/v2.1/servers/${noZone}`, headers: as('bob:p2', '2.69') })).json() as {
        server: Record<string, unknown>;
      };
      expect(shown.server['OS-EXT-AZ:availability_zone']).toBe('UNKNOWN');
      await h.apiDb.pool.query('UPDATE instance_mappings SET queued_for_delete = true WHERE instance_uuid = $1', [noZone]);
      const gone = await h.inject({ url: `/v2.1/servers/${noZone}`, headers: as('bob:p2', '2.69') });
      expect(gone.statusCode).toBe(404);
      expect(gone.json()).toEqual({ itemNotFound: { code: 404, message: `Instance ${noZone} could not be found.` } });
    });
  });

  it('changes-since (any version) and changes-before (2.66) bound updated_at and list deleted servers too, as Nova', async () => {
    const [old, recent, gone] = [
      await create('fay:p6', body({ name: 'f-old' })),
      await create('fay:p6', body({ name: 'f-new' })),
      await create('fay:p6', body({ name: 'f-gone' })),
    ];
    for (const id of [old, recent, gone]) await placeInCell(id, 'p6', 'active');
    await softDeleteInstance(h.cell1.pool, gone);
    const at = async (id: string, t: string): Promise<void> => {
      await h.cell1.pool.query('UPDATE instances SET updated_at = $2 WHERE uuid = $1', [id, t]);
    };
    await at(old, '2026-01-01T00:00:00Z');
    await at(recent, '2026-03-01T00:00:00Z');
    await at(gone, '2026-02-01T00:00:00Z');
    const ids = async (q: string, version = '2.66'): Promise<string[]> => {
      const res = await h.inject({ url: `/v2.1/servers/detail?${q}`, headers: as('fay:p6', version) });
      expect(res.statusCode).toBe(200);
      return (res.json() as { servers: { id: string }[] }).servers.map((x) => x.id);
    };
    // without a changes-* filter the deleted server is not listed
    expect((await ids('')).sort()).toEqual([old, recent].sort());
    expect(await ids('changes-since=2026-01-15T00:00:00Z')).toEqual(expect.arrayContaining([recent, gone]));
    expect(await ids('changes-since=2026-01-15T00:00:00Z')).not.toContain(old);
    expect(await ids('changes-before=2026-02-01T00:00:00Z')).toEqual(expect.arrayContaining([old, gone]));
    expect(await ids('changes-before=2026-02-01T00:00:00Z')).not.toContain(recent);
    expect(await ids('changes-since=2026-01-15T00:00:00Z&changes-before=2026-02-15T00:00:00Z')).toEqual([gone]);
    const deleted = (
      await h.inject({ url: '/v2.1/servers/detail?changes-since=2026-01-15T00:00:00Z', headers: as('fay:p6', '2.66') })
    ).json() as { servers: Record<string, unknown>[] };
    expect(deleted.servers.find((x) => x.id === gone)).toMatchObject({ status: 'DELETED', 'OS-EXT-STS:vm_state': 'deleted' });
    // below 2.66 a member's changes-before is dropped (Nova's remove_invalid_options): no bound, no deleted servers
    expect((await ids('changes-before=2026-02-01T00:00:00Z', '2.65')).sort()).toEqual([old, recent].sort());
    const bad = async (q: string): Promise<unknown> => {
      const res = await h.inject({ url: `/v2.1/servers?${q}`, headers: as('fay:p6', '2.66') });
      expect(res.statusCode).toBe(400);
      return res.json();
    };
    expect(await bad('changes-since=2026-03-01T00:00:00Z&changes-before=2026-01-01T00:00:00Z')).toEqual({
      badRequest: { code: 400, message: 'The value of changes-since must be less than or equal to changes-before.' },
    });
    expect(await bad('changes-before=yesterday')).toEqual({
      badRequest: { code: 400, message: expect.stringContaining("'yesterday' is not a 'date-time'") },
    });
    expect(await bad('changes-since=2026-13-01T00:00:00Z')).toHaveProperty('badRequest.code', 400);
    expect(await bad('changes-since=0000-01-01T00:00:00Z')).toHaveProperty('badRequest.code', 400);
    expect((await ids('changes-since=0001-01-01T00:00:00Z')).sort()).toEqual([old, recent, gone].sort());
  });

  it('a member sees only their project; all_tenants is admin-only', async () => {
    const mine = await create('carol:p3', body({ name: 'c1' }));
    const list = (await h.inject({ url: '/v2.1/servers', headers: as('carol:p3') })).json() as { servers: { id: string; name: string }[] };
    expect(list.servers.map((s) => s.id)).toEqual([mine]);
    expect(list.servers[0]).toMatchObject({ name: 'c1' });
    const other = (await h.inject({ url: '/v2.1/servers', headers: as('dave:p4') })).json() as { servers: unknown[] };
    expect(other.servers).toEqual([]);
    expect((await h.inject({ url: `/v2.1/servers/${mine}`, headers: as('dave:p4') })).statusCode).toBe(404);
    const forbidden = await h.inject({ url: '/v2.1/servers?all_tenants=1', headers: as('dave:p4') });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toHaveProperty('forbidden.code', 403);
    const all = (await h.inject({ url: '/v2.1/servers?all_tenants=1', headers: as('admin') })).json() as { servers: { id: string }[] };
    expect(all.servers.map((s) => s.id)).toContain(mine);
    const byProject = (await h.inject({ url: '/v2.1/servers?all_tenants=1&project_id=p3', headers: as('admin') })).json() as {
      servers: { id: string }[];
    };
    expect(byProject.servers.map((s) => s.id)).toEqual([mine]);
  });

  it('filters by status and name and pages with limit/marker', async () => {
    const ids = [
      await create('erin:p5', body({ name: 'web-1' })),
      await create('erin:p5', body({ name: 'web-2' })),
      await create('erin:p5', body({ name: 'db-1' })),
    ];
    await placeInCell(ids[0] ?? '', 'p5', 'active');
    const web = (await h.inject({ url: '/v2.1/servers?name=web', headers: as('erin:p5') })).json() as { servers: { name: string }[] };
    // NOTE: ids[0] is now shown from its cell row, named srv-xxxx by placeInCell: only web-2 matches.
    expect(web.servers.map((s) => s.name)).toEqual(['web-2']);
    const active = (await h.inject({ url: '/v2.1/servers?status=ACTIVE', headers: as('erin:p5') })).json() as { servers: { id: string }[] };
    expect(active.servers.map((s) => s.id)).toEqual([ids[0]]);
    const building = (await h.inject({ url: '/v2.1/servers?status=BUILD', headers: as('erin:p5') })).json() as {
      servers: { id: string }[];
    };
    expect(building.servers.map((s) => s.id).sort()).toEqual([ids[1], ids[2]].sort());
    expect((await h.inject({ url: '/v2.1/servers?status=BOGUS', headers: as('erin:p5') })).statusCode).toBe(400);
    const first = (await h.inject({ url: '/v2.1/servers?limit=2', headers: as('erin:p5') })).json() as {
      servers: { id: string }[];
      servers_links: { href: string }[];
    };
    expect(first.servers).toHaveLength(2);
    expect(first.servers_links[0]?.href).toContain(`marker=${first.servers[1]?.id}`);
    const second = (await h.inject({ url: `/v2.1/servers?limit=2&marker=${first.servers[1]?.id}`, headers: as('erin:p5') })).json() as {
      servers: { id: string }[];
      servers_links?: unknown;
    };
    expect(second.servers).toHaveLength(1);
    expect(second.servers_links).toBeUndefined();
    expect(new Set([...first.servers, ...second.servers].map((s) => s.id))).toEqual(new Set(ids));
    const badMarker = await h.inject({ url: '/v2.1/servers?marker=11111111-2222-3333-4444-555555555555', headers: as('erin:p5') });
    expect(badMarker.statusCode).toBe(400);
  });
});

describe("host_status (2.16+, admin): Nova's get_instance_host_status from the cell's services", () => {
  it("UP, UNKNOWN, MAINTENANCE, DOWN or '' by the host's nova-compute service, in show and in the detailed list", async () => {
    const hosts: Record<string, string> = {
      'hs-up': 'UP',
      'hs-silent': 'UNKNOWN',
      'hs-disabled': 'MAINTENANCE',
      'hs-forced': 'DOWN',
      'hs-none': '',
    };
    const ids: Record<string, string> = {};
    for (const host of Object.keys(hosts)) {
      if (host !== 'hs-none') {
        const { service } = await upsertService(h.cell1.pool, { host, binary: 'nova-compute', topic: 'compute' });
        await recordServiceHeartbeat(
          h.cell1.pool,
          host,
          'nova-compute',
          host === 'hs-silent' ? new Date(Date.now() - 120_000) : new Date(),
        );
        if (host === 'hs-disabled') await setServiceDisabled(h.cell1.pool, service.id, true, 'maintenance');
        if (host === 'hs-forced') await setServiceForcedDown(h.cell1.pool, service.id, true);
      }
      const uuid = await create('alice:p1');
      await createInstance(h.cell1.pool, {
        uuid,
        projectId: 'p1',
        userId: 'alice',
        flavor: TINY,
        imageRef: IMAGE,
        vmState: 'active',
        host,
        node: host,
      });
      await setInstanceMappingCell(h.apiDb.pool, uuid, h.cells.cell1.id);
      await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [uuid]);
      ids[host] = uuid;
    }
    const show = async (uuid: string, token = 'admin', version = '2.16'): Promise<Record<string, unknown>> =>
      ((await h.inject({ url: `/v2.1/servers/${uuid}`, headers: as(token, version) })).json() as { server: Record<string, unknown> })
        .server;
    for (const [host, status] of Object.entries(hosts))
      expect([host, (await show(ids[host] ?? ''))['host_status']]).toEqual([host, status]);
    const listed = (
      (await h.inject({ url: '/v2.1/servers/detail?all_tenants=1&limit=1000', headers: as('admin', '2.60') })).json() as {
        servers: { id: string; host_status: string }[];
      }
    ).servers;
    for (const [host, status] of Object.entries(hosts))
      expect([host, listed.find((s) => s.id === ids[host])?.host_status]).toEqual([host, status]);
    // not before 2.16, never for a member
    expect('host_status' in (await show(ids['hs-up'] ?? '', 'admin', '2.15'))).toBe(false);
    expect('host_status' in (await show(ids['hs-up'] ?? '', 'alice:p1', '2.60'))).toBe(false);
  });
});

describe('DELETE /v2.1/servers/{id}', () => {
  it('during BUILD deletes the build request, spec and mapping (no cast)', async () => {
    const id = await create('frank:p6');
    const deletes = h.seen.deletes.length;
    const res = await h.inject({ method: 'DELETE', url: `/v2.1/servers/${id}`, headers: as('frank:p6') });
    expect(res.statusCode).toBe(204);
    expect(await getBuildRequest(h.apiDb.pool, id)).toBeUndefined();
    expect(await getRequestSpec(h.apiDb.pool, id)).toBeUndefined();
    expect(await getInstanceMapping(h.apiDb.pool, id)).toBeUndefined();
    expect((await h.inject({ url: `/v2.1/servers/${id}`, headers: as('frank:p6') })).statusCode).toBe(404);
    expect(h.seen.deletes.length).toBe(deletes);
  });

  it('in a cell queues the delete and casts delete_instance; other projects get 404', async () => {
    const id = await create('frank:p6');
    await placeInCell(id, 'p6', 'active');
    expect((await h.inject({ method: 'DELETE', url: `/v2.1/servers/${id}`, headers: as('gina:p7') })).statusCode).toBe(404);
    const res = await h.inject({ method: 'DELETE', url: `/v2.1/servers/${id}`, headers: as('frank:p6') });
    expect(res.statusCode).toBe(204);
    const cast = await waitFor('delete cast', () => h.seen.deletes.find((d) => d.instanceUuid === id));
    expect(cast).toMatchObject({ cellUuid: h.cells.cell1.uuid, projectId: 'p6', userId: 'frank' });
    expect((await getInstanceMapping(h.apiDb.pool, id))?.queuedForDelete).toBe(true);
    const shown = (await h.inject({ url: `/v2.1/servers/${id}`, headers: as('frank:p6') })).json() as { server: Record<string, unknown> };
    expect(shown.server['OS-EXT-STS:task_state']).toBe('deleting');
  });
});
