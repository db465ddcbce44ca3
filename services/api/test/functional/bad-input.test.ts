// Property-based fuzzing (fast-check) of every body the compute API reads, the server action
// route, and the list query: every bad input gets a 4xx in Nova's error shape, judged in
// Nova's order (401, 403, 415, then the body), never a 5xx, and changes nothing (no API DB
// row, no cast). The seed is fixed (printed); a longer run on demand:
//   CELLSCHED_FUZZ_SEED=$RANDOM CELLSCHED_FUZZ_RUNS=2000 pnpm exec jest services/api/test/functional/bad-input.test.ts
// A failure prints the seed, the path and the smallest body found: replay with the same seed.
import { randomUUID } from 'node:crypto';
import { setInstanceMappingCell } from '@cellsched/api-db';
import { createInstance, recordServiceHeartbeat, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import fc from 'fast-check';
import { ACTION_ENDPOINTS, ACTION_ROUTE, BODY_ENDPOINTS, type BodyEndpoint, type Fixtures } from './fuzz/endpoints';
import { anyJson, nastyString, notJson } from './fuzz/junk';
import { as, IMAGE, startHarness, type Harness, type Res } from './harness';
import { apiState, isNovaError, type ApiState } from './state';

const SEED = Number(process.env.CELLSCHED_FUZZ_SEED ?? 20261212);
const RUNS = Number(process.env.CELLSCHED_FUZZ_RUNS ?? 50);
const TIMEOUT = Math.max(60_000, RUNS * 2_000);
const OPTIONS = { seed: SEED, numRuns: RUNS };
const ENDPOINTS: readonly BodyEndpoint[] = [...BODY_ENDPOINTS, ...ACTION_ENDPOINTS];

const MEMBER = 'fuzz:pfuzz';
const FLAVOR = { id: 0, flavorid: '2', name: 'm1.small', vcpus: 1, memoryMb: 2048, rootGb: 20, ephemeralGb: 0, swap: 0, extraSpecs: {} };
let h: Harness;
let fx: Fixtures;
let start: ApiState;

beforeAll(async () => {
  console.log(`bad-input fuzz: seed ${SEED}, ${RUNS} runs per property (CELLSCHED_FUZZ_SEED, CELLSCHED_FUZZ_RUNS to change)`);
  h = await startHarness('fuzz');
  // NOTE: the harness's hung cell would make every list wait for its timeout; lists are not what this file is about.
  await h.apiDb.pool.query('DELETE FROM cell_mappings WHERE uuid = $1', [h.cells.down.uuid]);
  const { service } = await upsertService(h.cell1.pool, { host: 'fuzz-host', binary: 'nova-compute', topic: 'compute' });
  const created = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as('fuzz:pfuzz'),
    payload: { server: { name: 'target', imageRef: IMAGE, flavorRef: '1' } },
  });
  await upsertComputeNode(h.cell1.pool, {
    uuid: randomUUID(),
    serviceId: service.id,
    host: 'fuzz-host',
    hypervisorHostname: 'fuzz-host',
    vcpus: 8,
    memoryMb: 16384,
    localGb: 100,
  });
  await recordServiceHeartbeat(h.cell1.pool, 'fuzz-host', 'nova-compute');
  const actionServers: Record<string, string> = {};
  for (const e of ACTION_ENDPOINTS) {
    const res = await h.inject({
      method: 'POST',
      url: '/v2.1/servers',
      headers: as(MEMBER),
      payload: { server: { name: e.name, imageRef: IMAGE, flavorRef: '2' } },
    });
    const id = (res.json() as { server: { id: string } }).server.id;
    await createInstance(h.cell1.pool, {
      uuid: id,
      projectId: 'pfuzz',
      userId: 'fuzz',
      flavor: FLAVOR,
      imageRef: IMAGE,
      vmState: 'active',
      host: 'fuzz-host',
      node: 'fuzz-host',
    });
    await h.cell1.pool.query('UPDATE instances SET launched_at = now() WHERE uuid = $1', [id]);
    await setInstanceMappingCell(h.apiDb.pool, id, h.cells.cell1.id);
    await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [id]);
    actionServers[e.name] = id;
  }
  const aggregate = await h.inject({
    method: 'POST',
    url: '/v2.1/os-aggregates',
    headers: as('admin'),
    payload: { aggregate: { name: 'fuzz-fixture' } },
  });
  const aggregateId = (aggregate.json() as { aggregate: { id: number } }).aggregate.id;
  fx = {
    image: IMAGE,
    serviceUuid: service.uuid,
    serviceHost: 'fuzz-host',
    serverUuid: (created.json() as { server: { id: string } }).server.id,
    actionServers,
    aggregateId,
  };
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const tokenFor = (e: BodyEndpoint): string => (e.adminOnly ? 'admin' : MEMBER);

function send(e: BodyEndpoint, body: string | undefined, headers: Record<string, string>): Promise<Res> {
  return h.raw({ method: e.method, url: e.path(fx), headers: { 'openstack-api-version': `compute ${e.version}`, ...headers }, body });
}

/** Sends one request and checks it was refused with a 4xx in Nova's shape and left the API DB as it was. */
async function refusedUnchanged(send: () => Promise<Res>, expected?: number): Promise<Res> {
  const before = await apiState(h);
  const res = await send();
  if (expected !== undefined) expect(res.statusCode).toBe(expected);
  expect(res.statusCode).toBeGreaterThanOrEqual(400);
  expect(res.statusCode).toBeLessThan(500);
  expect(isNovaError(res.statusCode, res.body)).toBe(true);
  expect((await apiState(h)).tables).toEqual(before.tables);
  return res;
}

/** A valid body of `e` with one to three of its breakers applied: bad by construction. */
function mutated(e: BodyEndpoint): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .array(fc.oneof(...e.breakers), { minLength: 1, maxLength: 3 })
    .map((ms) => ms.reduce((b, m) => m(b), structuredClone(e.valid(fx))));
}

async function noCastSince(state: ApiState): Promise<void> {
  await new Promise((r) => setTimeout(r, 200)); // a cast the API sent would have reached the fake conductor
  expect((await apiState(h)).casts).toEqual(state.casts);
}

it('every endpoint accepts its base body, so the mutations start from a good one', async () => {
  for (const e of ENDPOINTS) {
    const res = await send(e, JSON.stringify(e.valid(fx)), { 'x-auth-token': tokenFor(e), 'content-type': 'application/json' });
    expect([e.name, res.statusCode < 300 ? 'accepted' : res.body]).toEqual([e.name, 'accepted']);
  }
  start = await apiState(h);
});

describe.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s', (_name, e) => {
  it(
    "a body made bad by construction is a 4xx in Nova's shape and changes nothing",
    async () => {
      const state = await apiState(h);
      // NOTE: the body as its JSON text, so that a counterexample prints as what was sent.
      await fc.assert(
        fc.asyncProperty(
          mutated(e).map((b) => JSON.stringify(b)),
          async (body) => {
            await refusedUnchanged(() => send(e, body, { 'x-auth-token': tokenFor(e), 'content-type': 'application/json' }));
          },
        ),
        OPTIONS,
      );
      await noCastSince(state);
    },
    TIMEOUT,
  );
});

const GOOD_TYPES = [
  undefined,
  'application/json',
  'application/json; charset=UTF-8',
  'application/vnd.openstack.compute+json',
  'text/plain',
  '',
  ';',
];
const BAD_TYPES = fc.oneof(
  fc.constantFrom(
    'text/xml',
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'json',
    '*/*',
    'application/jsonx',
    'application/octet-stream',
    'text/html; charset=utf-8',
    'application/json+xml',
    'application/',
  ),
  fc.stringMatching(/^[a-z]{1,8}\/x-[a-z0-9.+-]{1,10}$/),
);

const ALL = new Map([...ENDPOINTS, ACTION_ROUTE].map((e) => [e.name, e]));
const endpointNamed = (name: string): BodyEndpoint => ALL.get(name) ?? ACTION_ROUTE;

/** A request to any endpoint (by name, so a counterexample reads well), any token, Content-Type and a bad body. */
const anyRequest = fc
  .record({
    endpoint: fc.constantFrom(...ALL.keys()),
    token: fc.constantFrom<string | undefined>(undefined, '', ':p', MEMBER, 'admin'),
    type: fc.oneof(
      fc.constantFrom(...GOOD_TYPES).map((t) => ({ t, bad: false })),
      BAD_TYPES.map((t) => ({ t, bad: true })),
    ),
    body: fc.oneof(
      anyJson.map((v) => JSON.stringify(v)),
      notJson,
      fc.constant(undefined),
    ),
  })
  .chain((r) => {
    const e = endpointNamed(r.endpoint);
    return e.breakers.length === 0
      ? fc.constant(r)
      : fc.oneof(
          fc.constant(r),
          mutated(e).map((b) => ({ ...r, body: JSON.stringify(b) })),
        );
  });

it(
  "any token, Content-Type and bad body: 401, then 403, then 415, then a 4xx, in Nova's shape, changing nothing",
  async () => {
    const state = await apiState(h);
    await fc.assert(
      fc.asyncProperty(anyRequest, async ({ endpoint: name, token, type, body }) => {
        const endpoint = endpointNamed(name);
        const headers: Record<string, string> = {};
        if (token !== undefined) headers['x-auth-token'] = token;
        if (type.t !== undefined) headers['content-type'] = type.t;
        const expected =
          token === undefined || token === '' || token === ':p'
            ? 401
            : endpoint.adminOnly && token === MEMBER
              ? 403
              : type.bad
                ? 415
                : undefined;
        await refusedUnchanged(() => send(endpoint, body, headers), expected);
      }),
      { ...OPTIONS, numRuns: RUNS * 4 },
    );
    await noCastSince(state);
  },
  TIMEOUT,
);

const regexish = fc.string({ unit: fc.constantFrom(...'a().*+?[]{}|^$\\-:,0123456789bwWdDs'.split('')), maxLength: 30 });
const listQuery = fc.record(
  {
    name: fc.oneof(regexish, nastyString),
    limit: fc.oneof(fc.nat().map(String), nastyString),
    marker: fc.oneof(fc.uuid(), nastyString),
    status: fc.oneof(fc.constantFrom('ACTIVE', 'BUILD', 'ERROR', 'bogus'), nastyString),
    all_tenants: fc.constantFrom('0', '1', 'true'),
    'changes-since': fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      nastyString,
    ),
    'changes-before': fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      nastyString,
    ),
  },
  { requiredKeys: [] },
);

it(
  "GET /servers with any name, limit, marker, status and changes-*: 200 or a 4xx in Nova's shape, never a 5xx, at once",
  async () => {
    await fc.assert(
      fc.asyncProperty(
        listQuery,
        fc.constantFrom(MEMBER, 'admin'),
        fc.constantFrom(undefined, '2.65', '2.66', '2.69'),
        async (query, token, version) => {
          const before = await apiState(h);
          const started = performance.now();
          const res = await h.inject({ url: `/v2.1/servers/detail?${new URLSearchParams(query).toString()}`, headers: as(token, version) });
          expect(performance.now() - started).toBeLessThan(3000);
          if (res.statusCode !== 200) {
            expect([res.statusCode, isNovaError(res.statusCode, res.body)]).toEqual([res.statusCode, true]);
            expect(res.statusCode).toBeLessThan(500);
          }
          expect(await apiState(h)).toEqual(before);
        },
      ),
      OPTIONS,
    );
  },
  TIMEOUT,
);

it('nothing the fuzzing sent was created or cast', async () => {
  await noCastSince(start);
  expect((await apiState(h)).tables).toEqual(start.tables);
});
