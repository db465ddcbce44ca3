// The order in which a request is judged, as Nova's pipeline does: body size (413, the
// sizelimit middleware runs before authentication), token (401), microversion, policy (403),
// Content-Type (415), then the body (400 "Malformed request body"), then the handler.
// Every refusal is Nova's error body and changes nothing.
import { as, IMAGE, startHarness, type Harness, type RawRequest, type Res } from './harness';
import { apiState, isNovaError } from './state';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('pipeline');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const MIB = 1024 * 1024;
const SERVER = JSON.stringify({ server: { name: 'vm', imageRef: IMAGE, flavorRef: '1', networks: 'none' } });
const json = (token?: string): Record<string, string> => ({ ...as(token, '2.64'), 'content-type': 'application/json' });

/** Sends `r` and checks that it changed nothing (no row, no cast) and answered Nova's error body. */
async function refused(r: RawRequest): Promise<Res> {
  const before = await apiState(h);
  const res = await h.raw(r);
  expect(isNovaError(res.statusCode, res.body)).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, 50)); // a cast would have been sent by now
  expect(await apiState(h)).toEqual(before);
  return res;
}

describe('Content-Type', () => {
  it.each(['text/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'json'])(
    '%s → 415 badMediaType, nothing created',
    async (type) => {
      const res = await refused({
        method: 'POST',
        url: '/v2.1/servers',
        headers: { ...json('alice:p1'), 'content-type': type },
        body: SERVER,
      });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toEqual({ badMediaType: { code: 415, message: 'Unsupported Content-Type' } });
    },
  );

  it('is judged on every request, as Nova does (a GET with an XML content type is 415 too)', async () => {
    const res = await h.raw({ method: 'GET', url: '/v2.1/servers', headers: { ...as('alice:p1'), 'content-type': 'application/xml' } });
    expect(res.statusCode).toBe(415);
  });

  it.each([
    ['application/json', 'application/json'],
    ['application/json with a charset', 'application/json; charset=utf-8'],
    ["Nova's own type", 'application/vnd.openstack.compute+json'],
    ['text/plain (Nova reads it as no type)', 'text/plain'],
    ['no Content-Type at all', undefined],
  ])('%s is read as JSON', async (_what, type) => {
    const headers: Record<string, string> = { ...as('alice:p1', '2.64') };
    if (type !== undefined) headers['content-type'] = type;
    const res = await h.raw({ method: 'POST', url: '/v2.1/servers', headers, body: SERVER });
    expect(res.statusCode).toBe(202);
  });
});

describe('authentication and authorization before the body', () => {
  const MALFORMED = '{"server": {"name": "vm",';

  it('no token and a malformed body → 401, not 400', async () => {
    const res = await refused({ method: 'POST', url: '/v2.1/servers', headers: json(), body: MALFORMED });
    expect(res.statusCode).toBe(401);
  });

  it('no token and an unsupported Content-Type → 401, not 415', async () => {
    const res = await refused({ method: 'POST', url: '/v2.1/servers', headers: { 'content-type': 'text/xml' }, body: SERVER });
    expect(res.statusCode).toBe(401);
  });

  it('a member on an admin-only route with a malformed body or a bad Content-Type → 403', async () => {
    const put = await refused({ method: 'PUT', url: '/v2.1/os-services/disable', headers: json('alice:p1'), body: MALFORMED });
    expect(put.statusCode).toBe(403);
    expect(put.json()).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-services:update to be performed." },
    });
    const specs = await refused({
      method: 'POST',
      url: '/v2.1/flavors/1/os-extra_specs',
      headers: { ...json('alice:p1'), 'content-type': 'text/xml' },
      body: '<x/>',
    });
    expect(specs.statusCode).toBe(403);
  });

  it('an admin with a malformed body → 400 Malformed request body', async () => {
    for (const url of ['/v2.1/os-services/disable', '/v2.1/flavors/1/os-extra_specs', '/v2.1/servers', '/v2.1/os-server-groups']) {
      const res = await refused({ method: url.includes('os-services') ? 'PUT' : 'POST', url, headers: json('admin'), body: MALFORMED });
      expect(res.json()).toEqual({ badRequest: { code: 400, message: 'Malformed request body' } });
    }
  });

  it('an unknown path under /v2.1 needs a token like any other (401), then is 404', async () => {
    expect((await refused({ method: 'POST', url: '/v2.1/nothing-here', headers: json(), body: MALFORMED })).statusCode).toBe(401);
    expect((await refused({ method: 'GET', url: '/v2.1/nothing-here', headers: as('alice:p1') })).statusCode).toBe(404);
  });
});

describe('body size limit (1 MiB)', () => {
  /** A valid create body padded with spaces to exactly `size` bytes. */
  const padded = (size: number): string => SERVER + ' '.repeat(size - SERVER.length);

  it('a body of exactly 1 MiB is read', async () => {
    expect((await h.raw({ method: 'POST', url: '/v2.1/servers', headers: json('alice:p1'), body: padded(MIB) })).statusCode).toBe(202);
  });

  it('one byte more → 413 overLimit, announced by Content-Length or sent chunked, with or without a token', async () => {
    for (const r of [
      { headers: json('alice:p1'), chunked: false },
      { headers: json('alice:p1'), chunked: true },
      { headers: json(), chunked: false },
    ]) {
      const res = await refused({ method: 'POST', url: '/v2.1/servers', body: padded(MIB + 1), ...r });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({
        overLimit: { code: 413, message: `Request is too large. Larger than max_request_body_size (${MIB}).` },
      });
    }
  });

  it('a much larger body is refused without reading it all', async () => {
    const started = performance.now();
    const res = await refused({ method: 'PUT', url: '/v2.1/os-services/disable', headers: json('admin'), body: padded(16 * MIB) });
    expect(res.statusCode).toBe(413);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
