// Flavors as Nova's API serves them to the real openstack client (issue 16): create, update
// (2.55), delete, the admin's is_public filter and paging, os-extra_specs (POST merge, PUT one
// key) and os-flavor-access with add/removeTenantAccess. Each bad request is answered with
// Nova's status and message, and changes nothing. Real PostgreSQL and RabbitMQ.
import { as, startHarness, type Harness, type Res } from './harness';
import { apiState } from './state';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('flavors');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const ADMIN = (v = '2.1'): Record<string, string> => as('admin', v);
const post = (url: string, payload: unknown, headers = ADMIN()): Promise<Res> => h.inject({ method: 'POST', url, headers, payload });
const put = (url: string, payload: unknown, headers = ADMIN()): Promise<Res> => h.inject({ method: 'PUT', url, headers, payload });
const get = (url: string, headers = ADMIN()): Promise<Res> => h.inject({ url, headers });
const del = (url: string, headers = ADMIN()): Promise<Res> => h.inject({ method: 'DELETE', url, headers });
const ids = (r: Res): string[] => (r.json() as { flavors: { id: string }[] }).flavors.map((f) => f.id);

/** Sends a request that must be refused with `status` and `body`, and checks the API DB did not change. */
async function refused(send: () => Promise<Res>, status: number, body: unknown): Promise<void> {
  const before = await apiState(h);
  const res = await send();
  expect([res.statusCode, res.json()]).toEqual([status, body]);
  expect((await apiState(h)).tables).toEqual(before.tables);
}
const bad = (message: string): unknown => ({ badRequest: { code: 400, message } });

describe('POST /flavors', () => {
  it('creates a flavor (200, the detail view), ids generated or given, numbers as strings accepted', async () => {
    const res = await post(
      '/v2.1/flavors',
      {
        flavor: {
          name: 'f.small',
          id: 'f1',
          ram: 512,
          vcpus: 1,
          disk: 1,
          'OS-FLV-EXT-DATA:ephemeral': 2,
          swap: 256,
          rxtx_factor: 2,
          description: 'small one',
        },
      },
      ADMIN('2.61'),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      flavor: {
        id: 'f1',
        name: 'f.small',
        links: expect.any(Array) as unknown,
        description: 'small one',
        ram: 512,
        disk: 1,
        vcpus: 1,
        swap: 256,
        'OS-FLV-EXT-DATA:ephemeral': 2,
        'OS-FLV-DISABLED:disabled': false,
        rxtx_factor: 2,
        'os-flavor-access:is_public': true,
        extra_specs: {},
      },
    });
    const auto = await post('/v2.1/flavors', {
      flavor: { name: 'f.auto', id: null, ram: '1024', vcpus: '2', disk: '0', 'os-flavor-access:is_public': 'False' },
    });
    expect(auto.statusCode).toBe(200);
    const flavor = (auto.json() as { flavor: Record<string, unknown> }).flavor;
    expect(flavor).toMatchObject({
      name: 'f.auto',
      ram: 1024,
      vcpus: 2,
      disk: 0,
      swap: '',
      rxtx_factor: 1,
      'os-flavor-access:is_public': false,
    });
    expect(flavor.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(flavor).not.toHaveProperty('description');
    expect((await post('/v2.1/flavors', { flavor: { name: 'f.num', id: 77, ram: 64, vcpus: 1, disk: 0 } })).json()).toHaveProperty(
      'flavor.id',
      '77',
    );
    // NOTE: Nova stores the id it is given: "auto" is the clients' word for "none", not the API's.
    expect((await post('/v2.1/flavors', { flavor: { name: 'f.lit', id: 'auto', ram: 64, vcpus: 1, disk: 0 } })).json()).toHaveProperty(
      'flavor.id',
      'auto',
    );
  });

  it("409 on a name or an id in use, with Nova's messages", async () => {
    await refused(() => post('/v2.1/flavors', { flavor: { name: 'f.small', ram: 1, vcpus: 1, disk: 0 } }), 409, {
      conflictingRequest: { code: 409, message: 'Flavor with name f.small already exists.' },
    });
    await refused(() => post('/v2.1/flavors', { flavor: { name: 'other', id: 'f1', ram: 1, vcpus: 1, disk: 0 } }), 409, {
      conflictingRequest: { code: 409, message: 'Flavor with ID f1 already exists.' },
    });
  });

  it("refuses bad bodies with Nova's messages, writing nothing", async () => {
    const ok = { name: 'f.bad', ram: 512, vcpus: 1, disk: 1 };
    const cases: [unknown, string][] = [
      [{}, "'flavor' is a required property"],
      [
        { flavor: { ram: 512, vcpus: 1, disk: 1 } },
        "Invalid input for field/attribute flavor. Value: {'ram': 512, 'vcpus': 1, 'disk': 1}. 'name' is a required property",
      ],
      [{ flavor: { ...ok, ram: 0 } }, 'Invalid input for field/attribute ram. Value: 0. 0 is less than the minimum of 1'],
      [{ flavor: { ...ok, ram: '0' } }, 'Invalid input received: ram must be >= 1'],
      [
        { flavor: { ...ok, vcpus: 2147483648 } },
        'Invalid input for field/attribute vcpus. Value: 2147483648. 2147483648 is greater than the maximum of 2147483647',
      ],
      [{ flavor: { ...ok, disk: 1.5 } }, "Invalid input for field/attribute disk. Value: 1.5. 1.5 is not of type 'integer', 'string'"],
      [{ flavor: { ...ok, swap: 'x' } }, "Invalid input for field/attribute swap. Value: x. 'x' does not match '^[0-9]+$'"],
      [
        { flavor: { ...ok, id: 'a/b' } },
        "Invalid input for field/attribute id. Value: a/b. 'a/b' does not match '^(?! )[a-zA-Z0-9. _-]+(?<! )$'",
      ],
      [
        { flavor: { ...ok, name: ' lead' } },
        "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.",
      ],
      [
        { flavor: { ...ok, rxtx_factor: 0 } },
        'Invalid input for field/attribute rxtx_factor. Value: 0. 0 is less than or equal to the minimum of 0',
      ],
      [{ flavor: { ...ok, rxtx_factor: '0' } }, "Invalid input received: 'rxtx_factor' argument must be a float between 0 and 3.40282e+38"],
      [
        { flavor: { ...ok, 'os-flavor-access:is_public': 'maybe' } },
        "Invalid input for field/attribute os-flavor-access:is_public. Value: maybe. 'maybe' is not one of the allowed values",
      ],
      [
        { flavor: { ...ok, description: 'x' } },
        "Invalid input for field/attribute flavor. Additional properties are not allowed ('description' was unexpected)",
      ],
      [{ flavor: ok, extra: 1 }, "Additional properties are not allowed ('extra' was unexpected)"],
    ];
    for (const [body, message] of cases) await refused(() => post('/v2.1/flavors', body), 400, bad(message));
    await refused(
      () => post('/v2.1/flavors', { flavor: { ...ok, description: 'a\u0007b' } }, ADMIN('2.55')),
      400,
      bad("Invalid input for field/attribute description. Value: a\u0007b. 'a\\x07b' does not match the printable characters pattern"),
    );
  });

  it('is admin-only (403 before the body is read)', async () => {
    await refused(() => post('/v2.1/flavors', { flavor: { name: 'f.member', ram: 1, vcpus: 1, disk: 0 } }, as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed." },
    });
  });
});

describe('GET /flavors[/detail]', () => {
  beforeAll(async () => {
    await post('/v2.1/flavors', {
      flavor: { name: 'p.private', id: 'p1', ram: 4096, vcpus: 2, disk: 40, 'os-flavor-access:is_public': false },
    });
  });

  it('the admin sees public flavors by default, is_public=none every flavor, is_public=false the private ones', async () => {
    expect(ids(await get('/v2.1/flavors'))).not.toContain('p1');
    expect(ids(await get('/v2.1/flavors/detail?is_public=None'))).toEqual(expect.arrayContaining(['1', 'p1', 'f1']));
    expect(ids(await get('/v2.1/flavors?is_public=false')).sort()).toEqual(expect.arrayContaining(['p1']));
    expect(ids(await get('/v2.1/flavors?is_public=false'))).not.toContain('1');
    await refused(() => get('/v2.1/flavors?is_public=maybe'), 400, bad('Invalid is_public filter [maybe]'));
  });

  it('a member sees a private flavor only once its project has access; minRam/minDisk filter', async () => {
    expect(ids(await get('/v2.1/flavors?is_public=none', as('bob:p2')))).not.toContain('p1');
    expect((await get('/v2.1/flavors/p1', as('bob:p2'))).statusCode).toBe(404);
    expect((await post('/v2.1/flavors/p1/action', { addTenantAccess: { tenant: 'p2' } })).statusCode).toBe(200);
    expect(ids(await get('/v2.1/flavors', as('bob:p2')))).toContain('p1');
    expect((await get('/v2.1/flavors/p1', as('bob:p2'))).statusCode).toBe(200);
    expect(ids(await get('/v2.1/flavors/detail?minRam=4096&minDisk=40', as('bob:p2')))).toEqual(['3', '4', '5', 'p1']);
    await refused(() => get('/v2.1/flavors?minRam=big'), 400, bad('Invalid minRam filter [big]'));
  });

  it('pages with limit and marker, with a next link on a full page', async () => {
    const first = await get('/v2.1/flavors?limit=2');
    expect(ids(first)).toEqual(['1', '2']);
    expect((first.json() as { flavors_links: { rel: string; href: string }[] }).flavors_links).toEqual([
      { rel: 'next', href: `${h.base}/v2.1/flavors?limit=2&marker=2` },
    ]);
    expect(ids(await get('/v2.1/flavors?limit=2&marker=2'))).toEqual(['3', '4']);
    await refused(() => get('/v2.1/flavors?marker=nope'), 400, bad('marker [nope] not found'));
  });
});

describe('PUT and DELETE /flavors/{id}', () => {
  it('updates the description from 2.55 only', async () => {
    const res = await put('/v2.1/flavors/f1', { flavor: { description: 'updated' } }, ADMIN('2.55'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveProperty('flavor.description', 'updated');
    expect((await get('/v2.1/flavors/f1', ADMIN('2.55'))).json()).toHaveProperty('flavor.description', 'updated');
    expect((await put('/v2.1/flavors/f1', { flavor: { description: null } }, ADMIN('2.55'))).json()).toHaveProperty(
      'flavor.description',
      null,
    );
    await refused(() => put('/v2.1/flavors/f1', { flavor: { description: 'x' } }, ADMIN('2.54')), 404, {
      itemNotFound: { code: 404, message: 'The resource could not be found.' },
    });
    await refused(
      () => put('/v2.1/flavors/f1', { flavor: { name: 'x', description: 'x' } }, ADMIN('2.55')),
      400,
      bad("Invalid input for field/attribute flavor. Additional properties are not allowed ('name' was unexpected)"),
    );
    await refused(
      () => put('/v2.1/flavors/f1', { flavor: {} }, ADMIN('2.55')),
      400,
      bad("Invalid input for field/attribute flavor. Value: {}. 'description' is a required property"),
    );
    await refused(() => put('/v2.1/flavors/nope', { flavor: { description: 'x' } }, ADMIN('2.55')), 404, {
      itemNotFound: { code: 404, message: 'Flavor nope could not be found.' },
    });
    await refused(() => put('/v2.1/flavors/f1', { flavor: { description: 'x' } }, as('alice:p1', '2.55')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-manage:update to be performed." },
    });
  });

  it('deletes (202), then 404; admin-only', async () => {
    await post('/v2.1/flavors', { flavor: { name: 'f.gone', id: 'gone', ram: 64, vcpus: 1, disk: 0 } });
    await refused(() => del('/v2.1/flavors/gone', as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-manage:delete to be performed." },
    });
    const res = await del('/v2.1/flavors/gone');
    expect([res.statusCode, res.body]).toEqual([202, '']);
    await refused(() => del('/v2.1/flavors/gone'), 404, { itemNotFound: { code: 404, message: 'Flavor gone could not be found.' } });
    expect((await get('/v2.1/flavors/gone')).statusCode).toBe(404);
  });
});

describe('os-extra_specs', () => {
  const specs = '/v2.1/flavors/f1/os-extra_specs';

  it('POST merges, PUT sets its one key, GET lists and shows, DELETE removes', async () => {
    expect((await post(specs, { extra_specs: { 'hw:cpu_policy': 'dedicated', 'quota:cpu_shares': 1024 } })).json()).toEqual({
      extra_specs: { 'hw:cpu_policy': 'dedicated', 'quota:cpu_shares': '1024' },
    });
    const set = await put(`${specs}/hw:cpu_policy`, { 'hw:cpu_policy': 'shared' });
    expect([set.statusCode, set.json()]).toEqual([200, { 'hw:cpu_policy': 'shared' }]);
    expect((await get(specs, as('alice:p1'))).json()).toEqual({ extra_specs: { 'hw:cpu_policy': 'shared', 'quota:cpu_shares': '1024' } });
    expect((await get(`${specs}/hw:cpu_policy`, as('alice:p1'))).json()).toEqual({ 'hw:cpu_policy': 'shared' });
    expect((await get('/v2.1/flavors/f1', ADMIN('2.61'))).json()).toHaveProperty('flavor.extra_specs', {
      'hw:cpu_policy': 'shared',
      'quota:cpu_shares': '1024',
    });
    expect((await del(`${specs}/quota:cpu_shares`)).statusCode).toBe(200);
    await refused(() => del(`${specs}/quota:cpu_shares`), 404, {
      itemNotFound: { code: 404, message: 'Flavor f1 has no extra specs with key quota:cpu_shares.' },
    });
    await refused(() => get(`${specs}/nope`), 404, { itemNotFound: { code: 404, message: 'Flavor f1 has no extra specs with key nope.' } });
  });

  it("PUT refuses a body that is not exactly the URL's key; writes are admin-only; the hyphenated path is not Nova's", async () => {
    await refused(() => put(`${specs}/hw:cpu_policy`, { 'hw:mem_page_size': 'large' }), 400, bad('Request body and URI mismatch'));
    await refused(
      () => put(`${specs}/hw:cpu_policy`, { 'hw:cpu_policy': 'a', 'hw:b': 'b' }),
      400,
      bad("{'hw:cpu_policy': 'a', 'hw:b': 'b'} has too many properties"),
    );
    await refused(() => put(`${specs}/hw:cpu_policy`, {}), 400, bad('{} does not have enough properties'));
    await refused(
      () => put(`${specs}/hw:cpu_policy`, { 'hw:cpu_policy': 'x'.repeat(256) }),
      400,
      bad(`Invalid input for field/attribute hw:cpu_policy. Value: ${'x'.repeat(256)}. '${'x'.repeat(256)}' is too long`),
    );
    await refused(
      () => put(`${specs}/hw:cpu_policy`, { 'hw:cpu_policy': true }),
      400,
      bad("Invalid input for field/attribute hw:cpu_policy. Value: true. True is not of type 'string', 'number'"),
    );
    await refused(
      () => post(specs, { extra_specs: { 'a/b': 'x' } }),
      400,
      bad("Invalid input for field/attribute extra_specs. Additional properties are not allowed ('a/b' was unexpected)"),
    );
    await refused(() => put(`${specs}/hw:cpu_policy`, { 'hw:cpu_policy': 'x' }, as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-extra-specs:update to be performed." },
    });
    await refused(() => put('/v2.1/flavors/nope/os-extra_specs/k', { k: 'v' }), 404, {
      itemNotFound: { code: 404, message: 'Flavor nope could not be found.' },
    });
    expect((await get('/v2.1/flavors/f1/os-extra-specs')).statusCode).toBe(404);
    // Keys an object's prototype has are keys like any other.
    await refused(() => put(`${specs}/constructor`, { x: 'v' }), 400, bad('Request body and URI mismatch'));
    await refused(() => get(`${specs}/constructor`), 404, {
      itemNotFound: { code: 404, message: 'Flavor f1 has no extra specs with key constructor.' },
    });
    expect((await put(`${specs}/__proto__`, JSON.parse('{"__proto__": "v"}'))).body).toBe('{"__proto__":"v"}');
    expect((await get(`${specs}/__proto__`)).body).toBe('{"__proto__":"v"}');
  });
});

describe('os-flavor-access and add/removeTenantAccess', () => {
  beforeAll(async () => {
    await post('/v2.1/flavors', {
      flavor: { name: 'a.private', id: 'acc', ram: 64, vcpus: 1, disk: 0, 'os-flavor-access:is_public': false },
    });
  });
  const action = (payload: unknown, headers = ADMIN('2.7')): Promise<Res> => post('/v2.1/flavors/acc/action', payload, headers);
  const accessOf = (...tenants: string[]): unknown => ({ flavor_access: tenants.map((t) => ({ flavor_id: 'acc', tenant_id: t })) });

  it('lists, adds and removes projects, answering the list', async () => {
    expect((await get('/v2.1/flavors/acc/os-flavor-access')).json()).toEqual(accessOf());
    expect((await action({ addTenantAccess: { tenant: 'demo' } })).json()).toEqual(accessOf('demo'));
    expect((await action({ addTenantAccess: { tenant: 'other' } })).json()).toEqual(accessOf('demo', 'other'));
    expect((await get('/v2.1/flavors/acc/os-flavor-access')).json()).toEqual(accessOf('demo', 'other'));
    const removed = await action({ removeTenantAccess: { tenant: 'other' } });
    expect([removed.statusCode, removed.json()]).toEqual([200, accessOf('demo')]);
  });

  it("409 when already there or the flavor is public (2.7), 404 when not there, for a public flavor's list, or no flavor", async () => {
    await refused(() => action({ addTenantAccess: { tenant: 'demo' } }), 409, {
      conflictingRequest: { code: 409, message: 'Flavor access already exists for flavor acc and project demo combination.' },
    });
    await refused(() => post('/v2.1/flavors/1/action', { addTenantAccess: { tenant: 'demo' } }, ADMIN('2.7')), 409, {
      conflictingRequest: { code: 409, message: 'Can not add access to a public flavor.' },
    });
    await refused(() => action({ removeTenantAccess: { tenant: 'nobody' } }), 404, {
      itemNotFound: { code: 404, message: 'Flavor access not found for acc / nobody combination.' },
    });
    await refused(() => get('/v2.1/flavors/1/os-flavor-access'), 404, {
      itemNotFound: { code: 404, message: 'Access list not available for public flavors.' },
    });
    await refused(() => post('/v2.1/flavors/nope/action', { addTenantAccess: { tenant: 'demo' } }), 404, {
      itemNotFound: { code: 404, message: 'Flavor nope could not be found.' },
    });
  });

  it('refuses bad bodies and members, changing nothing', async () => {
    await refused(
      () => action({ addTenantAccess: {} }),
      400,
      bad("Invalid input for field/attribute addTenantAccess. Value: {}. 'tenant' is a required property"),
    );
    await refused(
      () => action({ addTenantAccess: { tenant: '' } }),
      400,
      bad("Invalid input for field/attribute tenant. Value: . '' is too short"),
    );
    await refused(
      () => action({ removeTenantAccess: { tenant: 'demo', x: 1 } }),
      400,
      bad("Invalid input for field/attribute removeTenantAccess. Additional properties are not allowed ('x' was unexpected)"),
    );
    await refused(
      () => action({ addTenantAccess: { tenant: 'a' }, removeTenantAccess: { tenant: 'a' } }),
      400,
      bad('Malformed request body'),
    );
    await refused(() => action({ grantAccess: { tenant: 'a' } }), 400, bad('There is no such action: grantAccess'));
    await refused(() => action({ addTenantAccess: { tenant: 'p1' } }, as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-access:add_tenant_access to be performed." },
    });
    await refused(() => get('/v2.1/flavors/acc/os-flavor-access', as('alice:p1')), 403, {
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-access to be performed." },
    });
  });
});
