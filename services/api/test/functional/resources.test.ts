// Version discovery, microversions, auth, flavors, server groups, hypervisors, services,
// availability zones, instance actions and images, against real PostgreSQL and RabbitMQ.
import { randomUUID } from 'node:crypto';
import { addHostMappings, setInstanceMappingCell } from '@cellsched/api-db';
import {
  createInstance,
  EVENT_ERROR,
  EVENT_SUCCESS,
  finishActionEvent,
  recordServiceHeartbeat,
  startActionEvent,
  startInstanceAction,
  upsertComputeNode,
  upsertService,
} from '@cellsched/cell-db';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
let computeUuid = '';
beforeAll(async () => {
  h = await startHarness('resources');
  for (const host of ['host-a', 'host-b']) {
    const { service } = await upsertService(h.cell1.pool, { host, binary: 'nova-compute', topic: 'compute' });
    if (host === 'host-a') computeUuid = service.uuid;
    await upsertComputeNode(h.cell1.pool, {
      uuid: randomUUID(),
      serviceId: service.id,
      host,
      hypervisorHostname: `${host}.example`,
      vcpus: 8,
      memoryMb: 16384,
      localGb: 100,
      memoryMbUsed: 512,
    });
  }
  await recordServiceHeartbeat(h.cell1.pool, 'host-a', 'nova-compute');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('versions, auth, microversions', () => {
  it('serves version discovery without a token', async () => {
    const root = await h.inject({ url: '/' });
    expect(root.statusCode).toBe(200);
    expect(root.json()).toEqual({
      versions: [expect.objectContaining({ id: 'v2.1', status: 'CURRENT', version: '2.69', min_version: '2.1' })],
    });
    expect((await h.inject({ url: '/v2.1' })).json()).toHaveProperty('version.version', '2.69');
  });

  it('needs a token (401) and negotiates the version as Nova', async () => {
    const none = await h.inject({ url: '/v2.1/flavors' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toHaveProperty('unauthorized.code', 401);
    const dflt = await h.inject({ url: '/v2.1/flavors', headers: as('alice:p1') });
    expect(dflt.headers['openstack-api-version']).toBe('compute 2.1');
    expect((await h.inject({ url: '/v2.1/flavors', headers: as('alice:p1', 'latest') })).headers['openstack-api-version']).toBe(
      'compute 2.69',
    );
    const legacy = await h.inject({
      url: '/v2.1/flavors',
      headers: { 'x-auth-token': 'alice:p1', 'x-openstack-nova-api-version': '2.40' },
    });
    expect(legacy.headers['x-openstack-nova-api-version']).toBe('2.40');
    const tooNew = await h.inject({ url: '/v2.1/flavors', headers: as('alice:p1', '2.99') });
    expect(tooNew.statusCode).toBe(406);
    expect(tooNew.json()).toEqual({
      notAcceptable: { code: 406, message: 'Version 2.99 is not supported by the API. Minimum is 2.1 and maximum is 2.69.' },
    });
    expect((await h.inject({ url: '/v2.1/flavors', headers: as('alice:p1', 'two') })).statusCode).toBe(400);
    expect((await h.inject({ url: '/v2.1/nothing-here', headers: as('alice:p1') })).json()).toHaveProperty('itemNotFound.code', 404);
  });
});

describe('flavors', () => {
  it('lists, shows and manages extra specs (admin only for writes)', async () => {
    const list = (await h.inject({ url: '/v2.1/flavors', headers: as('alice:p1') })).json() as { flavors: { id: string; name: string }[] };
    expect(list.flavors.map((f) => f.name)).toEqual(expect.arrayContaining(['m1.tiny', 'm1.small']));
    const tiny = (await h.inject({ url: '/v2.1/flavors/1', headers: as('alice:p1', '2.61') })).json() as {
      flavor: Record<string, unknown>;
    };
    expect(tiny.flavor).toMatchObject({ id: '1', name: 'm1.tiny', ram: 512, vcpus: 1, disk: 1, swap: '', extra_specs: {} });
    expect((await h.inject({ url: '/v2.1/flavors/nope', headers: as('alice:p1') })).json()).toEqual({
      itemNotFound: { code: 404, message: 'Flavor nope could not be found.' },
    });
    const denied = await h.inject({
      method: 'POST',
      url: '/v2.1/flavors/1/os-extra_specs',
      headers: as('alice:p1'),
      payload: { extra_specs: { 'hw:cpu_policy': 'dedicated' } },
    });
    expect(denied.statusCode).toBe(403);
    const set = await h.inject({
      method: 'POST',
      url: '/v2.1/flavors/1/os-extra_specs',
      headers: as('admin'),
      payload: { extra_specs: { 'hw:cpu_policy': 'dedicated' } },
    });
    expect(set.statusCode).toBe(200);
    expect((await h.inject({ url: '/v2.1/flavors/1/os-extra_specs/hw:cpu_policy', headers: as('alice:p1') })).json()).toEqual({
      'hw:cpu_policy': 'dedicated',
    });
    expect(
      (await h.inject({ method: 'DELETE', url: '/v2.1/flavors/1/os-extra_specs/hw:cpu_policy', headers: as('admin') })).statusCode,
    ).toBe(200);
    expect((await h.inject({ url: '/v2.1/flavors/1/os-extra_specs', headers: as('alice:p1') })).json()).toEqual({ extra_specs: {} });
  });
});

describe('os-server-groups', () => {
  it('creates, lists, shows and deletes groups of the caller project', async () => {
    const bad = await h.inject({
      method: 'POST',
      url: '/v2.1/os-server-groups',
      headers: as('alice:p1'),
      payload: { server_group: { name: 'g', policies: ['soft-affinity'] } },
    });
    expect(bad.statusCode).toBe(400);
    const res = await h.inject({
      method: 'POST',
      url: '/v2.1/os-server-groups',
      headers: as('alice:p1', '2.15'),
      payload: { server_group: { name: 'g', policies: ['soft-affinity'] } },
    });
    expect(res.statusCode).toBe(200);
    const group = (res.json() as { server_group: { id: string } }).server_group;
    expect(group).toMatchObject({ name: 'g', policies: ['soft-affinity'], members: [], project_id: 'p1', user_id: 'alice' });
    const member = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1'),
      payload: { server: { name: 's', imageRef: IMAGE, flavorRef: '1' }, 'os:scheduler_hints': { group: group.id } },
    });
    expect(member.statusCode).toBe(202);
    const serverId = (member.json() as { server: { id: string } }).server.id;
    const shown = (await h.inject({ url: `/v2.1/os-server-groups/${group.id}`, headers: as('alice:p1') })).json() as {
      server_group: { members: string[] };
    };
    expect(shown.server_group.members).toEqual([serverId]);
    const cast = await waitFor('cast with the group', () => h.seen.schedule.find((c) => c.requestSpec?.instanceUuid === serverId));
    expect(cast.requestSpec?.instanceGroup).toMatchObject({ uuid: group.id, policy: 'soft-affinity' });
    expect((await h.inject({ url: `/v2.1/os-server-groups/${group.id}`, headers: as('bob:p2') })).statusCode).toBe(404);
    expect(
      ((await h.inject({ url: '/v2.1/os-server-groups', headers: as('bob:p2') })).json() as { server_groups: unknown[] }).server_groups,
    ).toEqual([]);
    expect((await h.inject({ method: 'DELETE', url: `/v2.1/os-server-groups/${group.id}`, headers: as('alice:p1') })).statusCode).toBe(204);
    expect((await h.inject({ url: `/v2.1/os-server-groups/${group.id}`, headers: as('alice:p1') })).statusCode).toBe(404);
  });
});

describe('os-server-groups at 2.64', () => {
  it('takes one policy and max_server_per_host rules (anti-affinity only) and puts the rule in the cast', async () => {
    const post = (payload: unknown, version = '2.64'): ReturnType<Harness['inject']> =>
      h.inject({ method: 'POST', url: '/v2.1/os-server-groups', headers: as('alice:p1', version), payload });
    const old = await post({ server_group: { name: 'g', policy: 'anti-affinity' } }, '2.63');
    expect(old.statusCode).toBe(400);
    const wrongRule = await post({ server_group: { name: 'g', policy: 'affinity', rules: { max_server_per_host: 2 } } });
    expect(wrongRule.json()).toEqual({
      badRequest: { code: 400, message: "Only anti-affinity policy supports 'max_server_per_host' rule." },
    });
    expect((await post({ server_group: { name: 'g', policy: 'anti-affinity', rules: { max_server_per_host: 0 } } })).statusCode).toBe(400);
    expect((await post({ server_group: { name: 'g', policies: ['anti-affinity'] } })).statusCode).toBe(400);
    const res = await post({ server_group: { name: 'g2', policy: 'anti-affinity', rules: { max_server_per_host: '2' } } });
    expect(res.statusCode).toBe(200);
    const group = (res.json() as { server_group: { id: string } }).server_group;
    expect(group).toEqual({
      id: expect.any(String),
      name: 'g2',
      policy: 'anti-affinity',
      rules: { max_server_per_host: 2 },
      members: [],
      project_id: 'p1',
      user_id: 'alice',
    });
    const shownOld = (await h.inject({ url: `/v2.1/os-server-groups/${group.id}`, headers: as('alice:p1', '2.63') })).json() as {
      server_group: Record<string, unknown>;
    };
    expect(shownOld.server_group).toMatchObject({ policies: ['anti-affinity'], metadata: {} });
    const boot = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1', '2.64'),
      payload: { server: { name: 's', imageRef: IMAGE, flavorRef: '1', networks: 'none' }, 'os:scheduler_hints': { group: group.id } },
    });
    const id = (boot.json() as { server: { id: string } }).server.id;
    const cast = await waitFor('cast', () => h.seen.schedule.find((c) => c.requestSpec?.instanceUuid === id));
    expect(cast.requestSpec?.instanceGroup).toMatchObject({ uuid: group.id, policy: 'anti-affinity', maxServerPerHost: 2 });
    const shown = (await h.inject({ url: `/v2.1/servers/${id}`, headers: as('alice:p1', '2.63') })).json() as {
      server: Record<string, unknown>;
    };
    expect(shown.server).toHaveProperty('trusted_image_certificates', null);
  });
});

describe('hosts across cells', () => {
  it('lists hypervisors (admin only), skipping the down cell as Nova does (no header, at any version)', async () => {
    expect((await h.inject({ url: '/v2.1/os-hypervisors', headers: as('alice:p1') })).statusCode).toBe(403);
    const res = await h.inject({ url: '/v2.1/os-hypervisors/detail', headers: as('admin', '2.53') });
    expect(res.headers).not.toHaveProperty('x-cellsched-down-cells');
    const hv = (res.json() as { hypervisors: Record<string, unknown>[] }).hypervisors;
    expect(hv.map((x) => [x.hypervisor_hostname, x.state, x.status])).toEqual([
      ['host-a.example', 'up', 'enabled'],
      ['host-b.example', 'down', 'enabled'],
    ]);
    expect(hv[0]).toMatchObject({ vcpus: 8, memory_mb: 16384, free_ram_mb: 15872, service: { host: 'host-a', id: computeUuid } });
    // what `openstack hypervisor show` asks next: the host's uptime; a down host's compute cannot answer
    const up = await h.inject({ url: `/v2.1/os-hypervisors/${String(hv[0]?.id)}/uptime`, headers: as('admin', '2.53') });
    expect(up.statusCode).toBe(200);
    expect(up.json()).toMatchObject({
      hypervisor: { id: hv[0]?.id, hypervisor_hostname: 'host-a.example', state: 'up', status: 'enabled' },
    });
    expect((up.json() as { hypervisor: { uptime: string } }).hypervisor.uptime).toMatch(
      /^ \d\d:\d\d:\d\d up (\d+ days?, )?\d\d:\d\d, {2}0 users, {2}load average: 0\.00, 0\.00, 0\.00$/,
    );
    const down = await h.inject({ url: `/v2.1/os-hypervisors/${String(hv[1]?.id)}/uptime`, headers: as('admin', '2.53') });
    expect(down.statusCode).toBe(400);
    expect(down.json()).toEqual({ badRequest: { code: 400, message: 'Compute service of host-b is unavailable at this time.' } });
    expect((await h.inject({ url: `/v2.1/os-hypervisors/${String(hv[0]?.id)}/uptime`, headers: as('alice:p1', '2.53') })).statusCode).toBe(
      403,
    );
  });

  it('lists services and availability zones', async () => {
    const services = (await h.inject({ url: '/v2.1/os-services', headers: as('admin') })).json() as { services: Record<string, unknown>[] };
    expect(services.services.map((s) => [s.host, s.binary, s.zone, s.status, s.state])).toEqual([
      ['host-a', 'nova-compute', 'nova', 'enabled', 'up'],
      ['host-b', 'nova-compute', 'nova', 'enabled', 'down'],
    ]);
    const az = (await h.inject({ url: '/v2.1/os-availability-zone', headers: as('alice:p1') })).json();
    expect(az).toEqual({ availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true }, hosts: null }] });
    expect((await h.inject({ url: '/v2.1/os-availability-zone/detail', headers: as('alice:p1') })).statusCode).toBe(403);
  });

  it('os-services: a down cell is skipped below 2.69; from 2.69 its host mappings are minimal nova-compute records', async () => {
    await addHostMappings(h.apiDb.pool, h.cells.down.id, ['host-z']);
    const at = async (version: string, query = ''): Promise<Record<string, unknown>[]> => {
      const res = await h.inject({ url: `/v2.1/os-services${query}`, headers: as('admin', version) });
      expect(res.statusCode).toBe(200);
      expect(res.headers).not.toHaveProperty('x-cellsched-down-cells');
      return (res.json() as { services: Record<string, unknown>[] }).services;
    };
    expect((await at('2.68')).map((s) => s.host)).toEqual(['host-a', 'host-b']);
    const now = await at('2.69');
    expect(now.map((s) => s.host)).toEqual(['host-a', 'host-b', 'host-z']);
    expect(now[2]).toEqual({ binary: 'nova-compute', host: 'host-z', status: 'UNKNOWN' });
    expect(await at('2.69', '?host=host-z')).toEqual([{ binary: 'nova-compute', host: 'host-z', status: 'UNKNOWN' }]);
    expect(await at('2.69', '?binary=nova-scheduler')).toEqual([]);
    await h.apiDb.pool.query('DELETE FROM host_mappings WHERE host = $1', ['host-z']);
  });

  it('disables and enables a compute through the super-conductor (legacy and 2.53 shapes)', async () => {
    const legacy = await h.inject({
      method: 'PUT',
      url: '/v2.1/os-services/disable-log-reason',
      headers: as('admin'),
      payload: { host: 'host-b', binary: 'nova-compute', disabled_reason: 'maintenance' },
    });
    expect(legacy.statusCode).toBe(200);
    expect(legacy.json()).toEqual({
      service: { host: 'host-b', binary: 'nova-compute', status: 'disabled', disabled_reason: 'maintenance' },
    });
    expect(await waitFor('disable cast', () => h.seen.services.find((s) => s.host === 'host-b'))).toMatchObject({
      cellUuid: h.cells.cell1.uuid,
      disabled: true,
      disabledReason: 'maintenance',
    });
    const modern = await h.inject({
      method: 'PUT',
      url: `/v2.1/os-services/${computeUuid}`,
      headers: as('admin', '2.53'),
      payload: { status: 'enabled' },
    });
    expect(modern.statusCode).toBe(200);
    expect(modern.json()).toHaveProperty('service.status', 'enabled');
    expect(await waitFor('enable cast', () => h.seen.services.find((s) => s.host === 'host-a'))).toMatchObject({ disabled: false });
    expect(
      (
        await h.inject({
          method: 'PUT',
          url: '/v2.1/os-services/disable',
          headers: as('admin'),
          payload: { host: 'nowhere', binary: 'nova-compute' },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await h.inject({
          method: 'PUT',
          url: '/v2.1/os-services/disable',
          headers: as('alice:p1'),
          payload: { host: 'host-a', binary: 'nova-compute' },
        })
      ).statusCode,
    ).toBe(403);
  });
});

describe('os-instance-actions', () => {
  it('shows the steps of a create with their hosts from 2.62', async () => {
    const res = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as('alice:p1'),
      payload: { server: { name: 'act', imageRef: IMAGE, flavorRef: '1' } },
    });
    const id = (res.json() as { server: { id: string } }).server.id;
    expect((await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions`, headers: as('alice:p1') })).json()).toEqual({
      instanceActions: [],
    });
    await createInstance(h.cell1.pool, {
      uuid: id,
      projectId: 'p1',
      userId: 'alice',
      flavor: { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} },
      vmState: 'active',
    });
    await setInstanceMappingCell(h.apiDb.pool, id, h.cells.cell1.id);
    await startInstanceAction(h.cell1.pool, { instanceUuid: id, requestId: 'req-1', action: 'create', userId: 'alice', projectId: 'p1' });
    const key = (host: string): { instanceUuid: string; requestId: string; event: string; host: string } => ({
      instanceUuid: id,
      requestId: 'req-1',
      event: 'compute__do_build_and_run_instance',
      host,
    });
    await startActionEvent(h.cell1.pool, key('host-a'));
    await finishActionEvent(h.cell1.pool, key('host-a'), { result: EVENT_ERROR, traceback: 'boom' });
    await startActionEvent(h.cell1.pool, key('host-b'));
    await finishActionEvent(h.cell1.pool, key('host-b'), { result: EVENT_SUCCESS });
    const actions = (await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions`, headers: as('alice:p1') })).json() as {
      instanceActions: Record<string, unknown>[];
    };
    expect(actions.instanceActions).toEqual([expect.objectContaining({ action: 'create', request_id: 'req-1', instance_uuid: id })]);
    const admin = (await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions/req-1`, headers: as('admin', '2.62') })).json() as {
      instanceAction: { events: Record<string, unknown>[] };
    };
    expect(admin.instanceAction.events.map((e) => [e.host, e.result, e.traceback])).toEqual([
      ['host-a', 'Error', 'boom'],
      ['host-b', 'Success', null],
    ]);
    const user = (await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions/req-1`, headers: as('alice:p1', '2.62') })).json() as {
      instanceAction: { events: Record<string, unknown>[] };
    };
    expect(user.instanceAction.events[0]).not.toHaveProperty('host');
    expect(user.instanceAction.events[0]).not.toHaveProperty('traceback');
    expect(user.instanceAction.events[0]?.hostId).toMatch(/^[0-9a-f]{56}$/);
    const old = (await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions/req-1`, headers: as('admin', '2.61') })).json() as {
      instanceAction: { events: Record<string, unknown>[] };
    };
    expect(old.instanceAction.events[0]).not.toHaveProperty('host');
    expect((await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions/req-x`, headers: as('alice:p1') })).statusCode).toBe(404);
    // 2.58: paging by limit and marker (a request id), changes-since; unknown parameters are a 400
    await startInstanceAction(h.cell1.pool, {
      instanceUuid: id,
      requestId: 'req-2',
      action: 'stop',
      userId: 'alice',
      projectId: 'p1',
      startTime: new Date(Date.now() + 1000),
    });
    const list = async (q: string): Promise<{ instanceActions: { request_id: string }[]; links?: { rel: string; href: string }[] }> =>
      (await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions${q}`, headers: as('alice:p1', '2.58') })).json() as never;
    const first = await list('?limit=1');
    expect(first.instanceActions.map((a) => a.request_id)).toEqual(['req-2']);
    expect(first.links).toEqual([{ rel: 'next', href: `${h.base}/v2.1/servers/${id}/os-instance-actions?limit=1&marker=req-2` }]);
    expect((await list('?limit=1&marker=req-2')).instanceActions.map((a) => a.request_id)).toEqual(['req-1']);
    expect((await list('?changes-since=2999-01-01T00:00:00Z')).instanceActions).toEqual([]);
    expect(
      (await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions?marker=nope`, headers: as('alice:p1', '2.58') })).json(),
    ).toEqual({ badRequest: { code: 400, message: 'Marker nope could not be found.' } });
    expect((await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions?foo=1`, headers: as('alice:p1', '2.58') })).statusCode).toBe(
      400,
    );
    expect((await h.inject({ url: `/v2.1/servers/${id}/os-instance-actions?foo=1`, headers: as('alice:p1', '2.57') })).statusCode).toBe(
      200,
    );
    // 2.66: changes-before (updated_at at or before it); an unknown parameter before 2.66
    const at = (q: string, version: string): Promise<{ statusCode: number; json: () => unknown }> =>
      h.inject({ url: `/v2.1/servers/${id}/os-instance-actions${q}`, headers: as('alice:p1', version) });
    expect((await at('?changes-before=2999-01-01T00:00:00Z', '2.65')).json()).toEqual({
      badRequest: { code: 400, message: "Additional properties are not allowed ('changes-before' was unexpected)" },
    });
    const ids = async (q: string): Promise<string[]> =>
      ((await at(q, '2.66')).json() as { instanceActions: { request_id: string }[] }).instanceActions.map((a) => a.request_id);
    expect(await ids('?changes-before=2999-01-01T00:00:00Z')).toEqual(['req-2', 'req-1']);
    expect(await ids('?changes-before=2000-01-01T00:00:00Z')).toEqual([]);
    const reversed = await at('?changes-since=2999-01-01T00:00:00Z&changes-before=2000-01-01T00:00:00Z', '2.66');
    expect([reversed.statusCode, reversed.json()]).toEqual([
      400,
      { badRequest: { code: 400, message: 'The value of changes-since must be less than or equal to changes-before.' } },
    ]);
  });
});

describe('images', () => {
  it('lists the Glance stand-in until 2.35 and is gone from 2.36', async () => {
    const list = (await h.inject({ url: '/v2.1/images', headers: as('alice:p1') })).json() as { images: { id: string }[] };
    expect(list.images.map((i) => i.id)).toContain(IMAGE);
    expect((await h.inject({ url: `/v2.1/images/${IMAGE}`, headers: as('alice:p1') })).json()).toHaveProperty('image.status', 'ACTIVE');
    expect((await h.inject({ url: '/v2.1/images', headers: as('alice:p1', '2.36') })).statusCode).toBe(404);
  });
});
