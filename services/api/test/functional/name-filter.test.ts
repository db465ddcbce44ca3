// `GET /servers?name=`: Nova's semantics (a regular expression matched anywhere in the name
// by the database, PostgreSQL here), an invalid pattern is Nova's 400, and no pattern can
// stall the api: the match runs in PostgreSQL under a timeout, never on the event loop.
import { setInstanceMappingCell } from '@cellsched/api-db';
import { createInstance } from '@cellsched/cell-db';
import { as, IMAGE, startHarness, type Harness, type Res } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('namefilter');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const TINY = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };
/** The harness's per-cell and name-match timeout (ms). */
const TIMEOUT = 800;

/** A server being built (a BuildRequest), named `name`, in project `project`. */
async function building(project: string, name: string): Promise<string> {
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as(`u:${project}`),
    payload: { server: { name, imageRef: IMAGE, flavorRef: '1' } },
  });
  expect(res.statusCode).toBe(202);
  return (res.json() as { server: { id: string } }).server.id;
}

/** A server in cell1 named `name`, as the super-conductor leaves it (test-only write to the cell DB). */
async function inCell(project: string, name: string): Promise<string> {
  const uuid = await building(project, name);
  await createInstance(h.cell1.pool, {
    uuid,
    projectId: project,
    userId: 'u',
    displayName: name,
    flavor: TINY,
    imageRef: IMAGE,
    vmState: 'active',
    host: 'host-a',
    node: 'node-a',
  });
  await setInstanceMappingCell(h.apiDb.pool, uuid, h.cells.cell1.id);
  await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [uuid]);
  return uuid;
}

const list = (project: string, query: string): Promise<Res> => h.inject({ url: `/v2.1/servers?${query}`, headers: as(`u:${project}`) });
const names = (res: Res): string[] => (res.json() as { servers: { name: string }[] }).servers.map((s) => s.name).sort();
const byName = (project: string, pattern: string): Promise<Res> => list(project, `name=${encodeURIComponent(pattern)}`);

/** `slow` in flight, and meanwhile another request: how long each took (ms). */
async function alongside(slow: () => Promise<Res>): Promise<{ slow: Res; slowMs: number; otherMs: number }> {
  const t0 = performance.now();
  const pending = slow().then((res) => ({ res, ms: performance.now() - t0 }));
  await new Promise((r) => setTimeout(r, 100));
  const t1 = performance.now();
  const other = await h.inject({ url: '/v2.1/flavors', headers: as('u:other') });
  const otherMs = performance.now() - t1;
  expect(other.statusCode).toBe(200);
  const done = await pending;
  return { slow: done.res, slowMs: done.ms, otherMs };
}

describe('name filter semantics (Nova on PostgreSQL)', () => {
  beforeAll(async () => {
    await building('sem', 'web7-a');
    await building('sem', 'db-1');
    await inCell('sem', 'my-web8');
    await inCell('sem', 'web-x');
  });

  it.each([
    ['web', ['my-web8', 'web-x', 'web7-a']],
    ['^web', ['web-x', 'web7-a']],
    ['web[[:digit:]]', ['my-web8', 'web7-a']], // a POSIX class: PostgreSQL's regex, not JavaScript's
    ['x$', ['web-x']],
    ['X', []], // case-sensitive, as PostgreSQL's ~
    ['db|x', ['db-1', 'web-x']],
  ])('%s matches anywhere in the name, in build requests and cells alike', async (pattern, expected) => {
    const res = await byName('sem', pattern);
    expect(res.statusCode).toBe(200);
    expect(names(res)).toEqual(expected);
  });

  it('pages a filtered list across cells with limit and marker', async () => {
    const first = await list('sem', 'name=web&limit=2');
    const page = first.json() as { servers: { id: string }[]; servers_links?: { href: string }[] };
    expect(page.servers).toHaveLength(2);
    const next = await list('sem', `name=web&limit=2&marker=${page.servers[1]?.id ?? ''}`);
    expect(names(next)).toHaveLength(1);
    expect(new Set([...names(first), ...names(next)])).toEqual(new Set(['my-web8', 'web-x', 'web7-a']));
  });
});

describe("an invalid pattern is Nova's 400", () => {
  it.each([
    [
      '(',
      "Invalid input for query parameters name. Value: (. '(' is not a 'regex' (invalid regular expression: parentheses () not balanced)",
    ],
    [
      'a{2,1}',
      "Invalid input for query parameters name. Value: a{2,1}. 'a{2,1}' is not a 'regex' (invalid regular expression: invalid repetition count(s))",
    ],
    ['', "Invalid input for query parameters name. Value: . '' is not a 'regex'"],
  ])('%j', async (pattern, message) => {
    const res = await byName('sem', pattern);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ badRequest: { code: 400, message } });
  });

  it('every value of a repeated name is judged', async () => {
    expect((await list('sem', 'name=web&name=(')).statusCode).toBe(400);
    expect((await list('sem', 'name=(&name=web')).statusCode).toBe(400);
  });
});

describe('no pattern stalls the api', () => {
  it("(a+)+$ against a long name of a's and a b is answered at once, other requests too", async () => {
    const evil = `${'a'.repeat(28)}b`;
    await building('redos', evil);
    await inCell('redos', evil);
    await inCell('redos', 'a'.repeat(28));
    const r = await alongside(() => byName('redos', '(a+)+$'));
    expect(r.slow.statusCode).toBe(200);
    expect(names(r.slow)).toEqual(['a'.repeat(28)]);
    expect(r.slowMs).toBeLessThan(1000);
    expect(r.otherMs).toBeLessThan(500);
  });

  // Back-references make PostgreSQL's own engine slow on this name: bounded by the timeout.
  const COSTLY = '^(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1b$';
  const LONG = `${'a'.repeat(150)}b`;

  it('a pattern PostgreSQL cannot match in time on a build request is a 400 within the timeout', async () => {
    await building('costly-br', LONG);
    const r = await alongside(() => byName('costly-br', COSTLY));
    expect(r.slow.statusCode).toBe(400);
    expect(r.slow.json()).toEqual({
      badRequest: {
        code: 400,
        message: `Invalid input for query parameters name. Value: ${COSTLY}. It could not be matched within ${TIMEOUT} ms.`,
      },
    });
    expect(r.slowMs).toBeLessThan(TIMEOUT + 1000);
    expect(r.otherMs).toBeLessThan(500);
  });

  it('one a cell cannot match in time skips that cell (as any slow cell: a filter shows no minimal record), within the timeout', async () => {
    await inCell('costly-cell', LONG);
    const r = await alongside(() => byName('costly-cell', COSTLY));
    expect(r.slow.statusCode).toBe(200);
    expect(names(r.slow)).toEqual([]);
    expect(r.slow.headers).not.toHaveProperty('x-cellsched-down-cells');
    expect(r.slowMs).toBeLessThan(TIMEOUT + 1000);
    expect(r.otherMs).toBeLessThan(500);
    const plain = await list('costly-cell', 'name=b%24');
    expect(names(plain)).toEqual([LONG]);
  });
});
