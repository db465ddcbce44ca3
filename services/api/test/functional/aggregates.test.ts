// Host aggregates as Nova's os-aggregates serves them (issue 16): create, list, show, update,
// delete and the actions add_host, remove_host, set_metadata, with Nova's statuses, bodies and
// messages; membership mirrored on the host's compute node providers (a fake placement port
// records it); zones as os-availability-zone lists them. Each refused request changes nothing.
// Real PostgreSQL and RabbitMQ.
import { randomUUID } from 'node:crypto';
import { addHostMappings } from '@cellsched/api-db';
import { createInstance, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { as, IMAGE, startHarness, type Harness, type Res } from './harness';
import { apiState } from './state';

let h: Harness;
const NODES: Record<string, string> = { 'host-a': randomUUID(), 'host-b': randomUUID(), 'host-c': randomUUID() };
const FLAVOR = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };
beforeAll(async () => {
  h = await startHarness('aggregates');
  for (const host of Object.keys(NODES)) {
    const { service } = await upsertService(h.cell1.pool, { host, binary: 'nova-compute', topic: 'compute' });
    await upsertComputeNode(h.cell1.pool, {
      uuid: NODES[host] as string,
      serviceId: service.id,
      host,
      hypervisorHostname: host,
      vcpus: 8,
      memoryMb: 16384,
      localGb: 100,
    });
  }
  await upsertService(h.cell1.pool, { host: 'sched', binary: 'nova-scheduler', topic: 'scheduler' });
  // NOTE: host-c stays unmapped: found by asking the cells, as Nova's fallback does.
  await addHostMappings(h.apiDb.pool, h.cells.cell1.id, ['host-a', 'host-b']);
  await createInstance(h.cell1.pool, {
    uuid: randomUUID(),
    projectId: 'p1',
    userId: 'alice',
    flavor: FLAVOR,
    imageRef: IMAGE,
    vmState: 'active',
    host: 'host-b',
    node: 'host-b',
  });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const ADMIN = (v = '2.1'): Record<string, string> => as('admin', v);
const post = (url: string, payload: unknown, headers = ADMIN()): Promise<Res> => h.inject({ method: 'POST', url, headers, payload });
const put = (url: string, payload: unknown, headers = ADMIN()): Promise<Res> => h.inject({ method: 'PUT', url, headers, payload });
const get = (url: string, headers = ADMIN()): Promise<Res> => h.inject({ url, headers });
const del = (url: string, headers = ADMIN()): Promise<Res> => h.inject({ method: 'DELETE', url, headers });
const action = (id: number, payload: unknown, headers = ADMIN()): Promise<Res> =>
  post(`/v2.1/os-aggregates/${id}/action`, payload, headers);
type View = Record<string, unknown> & { id: number; uuid: string; hosts: string[]; metadata: Record<string, string> };
const agg = (r: Res): View => (r.json() as { aggregate: View }).aggregate;

/** Sends a request that must be refused with `status` and `body`; the API DB and placement must not change. */
async function refused(send: () => Promise<Res>, status: number, body: unknown): Promise<void> {
  const before = await apiState(h);
  const placement = JSON.stringify([...h.providerAggregates].map(([k, v]) => [k, [...v]]));
  const res = await send();
  expect([res.statusCode, res.json()]).toEqual([status, body]);
  expect((await apiState(h)).tables).toEqual(before.tables);
  expect(JSON.stringify([...h.providerAggregates].map(([k, v]) => [k, [...v]]))).toBe(placement);
}
const bad = (message: string): unknown => ({ badRequest: { code: 400, message } });
const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

let az1: View;
describe('POST /os-aggregates', () => {
  it('creates (200, no hosts nor metadata in the answer; uuid from 2.41), names and zones trimmed', async () => {
    const old = await post('/v2.1/os-aggregates', { aggregate: { name: 'agg-old', availability_zone: null } });
    expect(old.statusCode).toBe(200);
    expect(agg(old)).toEqual({
      id: expect.any(Number) as unknown,
      name: 'agg-old',
      availability_zone: null,
      created_at: expect.stringMatching(TS) as unknown,
      updated_at: null,
      deleted_at: null,
      deleted: false,
    });
    const res = await post('/v2.1/os-aggregates', { aggregate: { name: 'agg-az1', availability_zone: 'az1' } }, ADMIN('2.41'));
    expect(res.statusCode).toBe(200);
    az1 = agg(res);
    expect(az1).toMatchObject({ name: 'agg-az1', availability_zone: 'az1', uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown });
    expect(az1).not.toHaveProperty('hosts');
  });

  it("refuses Nova's bad bodies (400), a name in use (409) and members (403), changing nothing", async () => {
    const url = '/v2.1/os-aggregates';
    await refused(() => post(url, { aggregate: { name: 'agg-az1' } }), 409, {
      conflictingRequest: { code: 409, message: 'Aggregate agg-az1 already exists.' },
    });
    await refused(
      () => post(url, { aggregate: {} }),
      400,
      bad("Invalid input for field/attribute aggregate. Value: {}. 'name' is a required property"),
    );
    await refused(
      () => post(url, { aggregate: { name: ' x' } }),
      400,
      bad("An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace."),
    );
    await refused(
      () => post(url, { aggregate: { name: 'x', availability_zone: 'a:b' } }),
      400,
      bad("Invalid input for field/attribute availability_zone. Value: a:b. 'a:b' is not valid under any of the given schemas"),
    );
    await refused(
      () => post(url, { aggregate: { name: 'x', hosts: [] } }),
      400,
      bad("Invalid input for field/attribute aggregate. Additional properties are not allowed ('hosts' was unexpected)"),
    );
    await refused(() => post(url, { name: 'x' }), 400, bad("'aggregate' is a required property"));
    await refused(() => post(url, { aggregate: { name: 'x' } }, as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-aggregates:create to be performed." },
    });
  });
});

describe('GET /os-aggregates[/{id}]', () => {
  it('lists and shows with hosts and metadata; 400 for an id that is not an integer, 404 for an unknown one', async () => {
    const list = (await get('/v2.1/os-aggregates')).json() as { aggregates: View[] };
    expect(list.aggregates.map((a) => [a.name, a.availability_zone, a.hosts, a.metadata, 'uuid' in a])).toEqual([
      ['agg-old', null, [], {}, false],
      ['agg-az1', 'az1', [], { availability_zone: 'az1' }, false],
    ]);
    expect(agg(await get(`/v2.1/os-aggregates/${az1.id}`, ADMIN('2.41')))).toMatchObject({
      id: az1.id,
      uuid: az1.uuid,
      hosts: [],
      metadata: { availability_zone: 'az1' },
    });
    expect((await get('/v2.1/os-aggregates/abc')).json()).toEqual(bad('Invalid input received: id must be an integer'));
    expect((await get('/v2.1/os-aggregates/999999')).json()).toEqual({
      itemNotFound: { code: 404, message: 'Aggregate 999999 could not be found.' },
    });
    expect((await get('/v2.1/os-aggregates', as('alice:p1'))).statusCode).toBe(403);
  });
});

describe('add_host', () => {
  it('adds a compute host (mapped or found in its cell) and mirrors it on its compute node provider', async () => {
    const res = await action(az1.id, { add_host: { host: 'host-a' } }, ADMIN('2.41'));
    expect(res.statusCode).toBe(200);
    expect(agg(res)).toMatchObject({
      hosts: ['host-a'],
      metadata: { availability_zone: 'az1' },
      updated_at: expect.stringMatching(TS) as unknown,
    });
    expect([...(h.providerAggregates.get(NODES['host-a'] as string) ?? [])]).toEqual([az1.uuid]);
    expect(agg(await action(az1.id, { add_host: { host: 'host-c' } })).hosts).toEqual(['host-a', 'host-c']);
    expect([...(h.providerAggregates.get(NODES['host-c'] as string) ?? [])]).toEqual([az1.uuid]);
  });

  it("answers Nova's 404 / 409 / 400 and changes nothing", async () => {
    const other = agg(await post('/v2.1/os-aggregates', { aggregate: { name: 'agg-az2', availability_zone: 'az2' } }));
    await refused(() => action(az1.id, { add_host: { host: 'host-a' } }), 409, {
      conflictingRequest: { code: 409, message: `Aggregate ${az1.id} already has host host-a.` },
    });
    await refused(() => action(az1.id, { add_host: { host: 'nope' } }), 404, {
      itemNotFound: { code: 404, message: 'Compute host nope could not be found.' },
    });
    await refused(() => action(az1.id, { add_host: { host: 'sched' } }), 404, {
      itemNotFound: { code: 404, message: 'Compute host sched could not be found.' },
    });
    await refused(() => action(999999, { add_host: { host: 'host-a' } }), 404, {
      itemNotFound: { code: 404, message: 'Aggregate 999999 could not be found.' },
    });
    await refused(() => action(other.id, { add_host: { host: 'host-a' } }), 409, {
      conflictingRequest: {
        code: 409,
        message: `Cannot add host to aggregate ${other.id}. Reason: One or more hosts already in availability zone(s) ['az1'].`,
      },
    });
    await refused(() => action(other.id, { add_host: { host: 'host-b' } }), 409, {
      conflictingRequest: {
        code: 409,
        message: `Cannot add host to aggregate ${other.id}. Reason: The host cannot be added to the aggregate as the availability zone of the host would change from 'None' to 'az2' but the host already has 1 instance(s). Changing the AZ of an existing instance is not supported by this action. Move the instances away from this host then try again. If you need to move the instances between AZs then you can use shelve_offload and unshelve to achieve this..`,
      },
    });
    await refused(
      () => action(az1.id, { add_host: { host: 'a b' } }),
      400,
      bad("Invalid input for field/attribute host. Value: a b. 'a b' does not match '^[a-zA-Z0-9-._]*$'"),
    );
    await refused(
      () => action(az1.id, { add_host: {} }),
      400,
      bad("Invalid input for field/attribute add_host. Value: {}. 'host' is a required property"),
    );
    await refused(() => action(az1.id, { add_hosts: { host: 'host-a' } }), 400, bad('There is no such action: add_hosts'));
    await refused(
      () => action(az1.id, { add_host: { host: 'host-a' }, remove_host: { host: 'host-a' } }),
      400,
      bad('Malformed request body'),
    );
    await refused(() => action(az1.id, { add_host: { host: 'host-b' } }, as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-aggregates:add_host to be performed." },
    });
    expect((await del(`/v2.1/os-aggregates/${other.id}`)).statusCode).toBe(200);
  });
});

describe('set_metadata and PUT', () => {
  it('merges metadata (null removes a key) and renames', async () => {
    const res = await action(az1.id, { set_metadata: { metadata: { ssd: 'true', filter_tenant_id: 'p1' } } });
    expect(agg(res).metadata).toEqual({ availability_zone: 'az1', ssd: 'true', filter_tenant_id: 'p1' });
    expect(agg(await action(az1.id, { set_metadata: { metadata: { ssd: null, gone: null } } })).metadata).toEqual({
      availability_zone: 'az1',
      filter_tenant_id: 'p1',
    });
    const renamed = await put(`/v2.1/os-aggregates/${az1.id}`, { aggregate: { name: ' agg-one ' } });
    expect([renamed.statusCode, agg(renamed).name, agg(renamed).hosts]).toEqual([200, 'agg-one', ['host-a', 'host-c']]);
  });

  it('changes the zone of hosts without instances; refuses empty or conflicting zones and bad keys (400), names in use (409)', async () => {
    // NOTE: host-c is unmapped, so its instances are counted in every cell: the silent one makes it a 503, as nothing can be judged.
    await refused(() => action(az1.id, { set_metadata: { metadata: { availability_zone: 'az9' } } }), 503, {
      serviceUnavailable: { code: 503, message: expect.stringContaining('did not answer') as unknown },
    });
    await addHostMappings(h.apiDb.pool, h.cells.cell1.id, ['host-c']);
    expect(agg(await action(az1.id, { set_metadata: { metadata: { availability_zone: 'az9' } } })).availability_zone).toBe('az9');
    expect(agg(await put(`/v2.1/os-aggregates/${az1.id}`, { aggregate: { availability_zone: 'az1' } })).availability_zone).toBe('az1');
    const busy = agg(await post('/v2.1/os-aggregates', { aggregate: { name: 'agg-busy' } }));
    expect(agg(await action(busy.id, { add_host: { host: 'host-a' } })).hosts).toEqual(['host-a']);
    await refused(
      () => action(busy.id, { set_metadata: { metadata: { availability_zone: 'az2' } } }),
      400,
      bad(`Cannot update metadata of aggregate ${busy.id}. Reason: One or more hosts already in availability zone(s) ['az1'].`),
    );
    await refused(
      () => put(`/v2.1/os-aggregates/${az1.id}`, { aggregate: { availability_zone: null } }),
      400,
      bad(`Cannot update aggregate ${az1.id}. Reason: Aggregate agg-one does not support empty named availability zone.`),
    );
    await refused(
      () => action(az1.id, { set_metadata: { metadata: { availability_zone: null } } }),
      400,
      bad(`Cannot update metadata of aggregate ${az1.id}. Reason: Aggregate agg-one does not support empty named availability zone.`),
    );
    await refused(() => put(`/v2.1/os-aggregates/${az1.id}`, { aggregate: { name: 'agg-busy' } }), 409, {
      conflictingRequest: { code: 409, message: 'Aggregate agg-busy already exists.' },
    });
    await refused(
      () => put(`/v2.1/os-aggregates/${az1.id}`, { aggregate: {} }),
      400,
      bad('Invalid input for field/attribute aggregate. Value: {}. {} is not valid under any of the given schemas'),
    );
    await refused(
      () => action(az1.id, { set_metadata: { metadata: { 'a/b': 'x' } } }),
      400,
      bad("Invalid input for field/attribute metadata. Value: {'a/b': 'x'}. Additional properties are not allowed ('a/b' was unexpected)"),
    );
    await refused(
      () => action(az1.id, { set_metadata: { metadata: { k: 1 } } }),
      400,
      bad("Invalid input for field/attribute k. Value: 1. 1 is not of type 'string', 'null'"),
    );
    await refused(
      () => action(az1.id, { set_metadata: {} }),
      400,
      bad("Invalid input for field/attribute set_metadata. Value: {}. 'metadata' is a required property"),
    );
    expect(agg(await action(busy.id, { remove_host: { host: 'host-a' } })).hosts).toEqual([]);
    expect([...(h.providerAggregates.get(NODES['host-a'] as string) ?? [])]).toEqual([az1.uuid]);
    expect((await del(`/v2.1/os-aggregates/${busy.id}`)).statusCode).toBe(200);
  });
});

describe('availability zones', () => {
  it("lists the aggregates' zones, the default zone for the other compute hosts, internal in the detail", async () => {
    const zones = (await get('/v2.1/os-availability-zone')).json();
    expect(zones).toEqual({
      availabilityZoneInfo: [
        { zoneName: 'az1', zoneState: { available: true }, hosts: null },
        { zoneName: 'nova', zoneState: { available: true }, hosts: null },
      ],
    });
    const detail = (await get('/v2.1/os-availability-zone/detail')).json() as {
      availabilityZoneInfo: { zoneName: string; hosts: Record<string, unknown> }[];
    };
    expect(detail.availabilityZoneInfo.map((z) => [z.zoneName, Object.keys(z.hosts).sort()])).toEqual([
      ['az1', ['host-a', 'host-c']],
      ['internal', ['sched']],
      ['nova', ['host-b']],
    ]);
  });
});

describe('remove_host and DELETE', () => {
  it("refuses to delete an aggregate with hosts (400), Nova's 404 for a host not in it; removes and unmirrors; deletes (200, no body)", async () => {
    await refused(
      () => del(`/v2.1/os-aggregates/${az1.id}`),
      400,
      bad(`Cannot remove host from aggregate ${az1.id}. Reason: Host aggregate is not empty.`),
    );
    // NOTE: as in Nova, whether host-b's instance would change zone is judged before whether host-b is a member.
    await refused(() => action(az1.id, { remove_host: { host: 'host-b' } }), 409, {
      conflictingRequest: {
        code: 409,
        message: expect.stringContaining(
          `Cannot remove host from aggregate ${az1.id}. Reason: The host cannot be removed from the aggregate as the availability zone of the host would change from 'az1' to 'None'`,
        ) as unknown,
      },
    });
    const noZone = agg(await post('/v2.1/os-aggregates', { aggregate: { name: 'agg-nozone' } }));
    await refused(() => action(noZone.id, { remove_host: { host: 'host-b' } }), 404, {
      itemNotFound: { code: 404, message: `Cannot remove host host-b in aggregate ${noZone.id}` },
    });
    await refused(() => action(az1.id, { remove_host: { host: 'nope' } }), 404, {
      itemNotFound: { code: 404, message: `Cannot remove host nope in aggregate ${az1.id}` },
    });
    for (const host of ['host-a', 'host-c']) expect((await action(az1.id, { remove_host: { host } })).statusCode).toBe(200);
    expect([...(h.providerAggregates.get(NODES['host-a'] as string) ?? [])]).toEqual([]);
    expect([...(h.providerAggregates.get(NODES['host-c'] as string) ?? [])]).toEqual([]);
    const gone = await del(`/v2.1/os-aggregates/${az1.id}`);
    expect([gone.statusCode, gone.body]).toEqual([200, '']);
    expect((await get(`/v2.1/os-aggregates/${az1.id}`)).statusCode).toBe(404);
  });
});
