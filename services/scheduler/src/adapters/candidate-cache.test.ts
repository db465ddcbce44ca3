import type { GetAllocationCandidatesRequest, GetAllocationCandidatesResponse } from '@cellsched/wire';
import { CandidateCache } from './candidate-cache';

const query = (overrides: Partial<GetAllocationCandidatesRequest> = {}): GetAllocationCandidatesRequest => ({
  groups: [{ suffix: '', resources: { VCPU: 1 }, required: [], forbidden: [], memberOf: [], forbiddenMemberOf: [], inTree: '' }],
  groupPolicy: '',
  limit: 10,
  rootRequired: [],
  rootForbidden: [],
  sameSubtree: [],
  seed: 1,
  ...overrides,
});

function answer(used: number, candidates = 1): GetAllocationCandidatesResponse {
  return {
    allocationRequests: Array.from({ length: candidates }, () => ({
      allocations: [{ resourceProviderUuid: 'rp1', resources: { VCPU: 1 } }],
      mappings: {},
    })),
    providerSummaries: {
      rp1: {
        uuid: 'rp1',
        name: 'rp1',
        rootProviderUuid: 'rp1',
        parentProviderUuid: '',
        resources: { VCPU: { capacity: 8, used } },
        traits: [],
        generation: 1,
        aggregates: [],
      },
    },
  };
}

function setup(ttl = 100) {
  let now = 0;
  let used = 0;
  let candidates = 1;
  const fetch = jest.fn((_: GetAllocationCandidatesRequest) => Promise.resolve(answer(used, candidates)));
  const cache = new CandidateCache(fetch, ttl, () => now);
  return {
    cache,
    fetch,
    advance: (ms: number) => {
      now += ms;
    },
    setUsed: (u: number) => {
      used = u;
    },
    setCandidates: (c: number) => {
      candidates = c;
    },
  };
}

test.each([
  ['within the TTL, another seed: reused', 50, query({ seed: 2 }), {}, 1],
  ['after the TTL: fetched again', 100, query(), {}, 2],
  ['fresh: fetched again', 0, query(), { fresh: true }, 2],
  ['an in_tree re-read: always fetched', 0, query({ groups: [{ ...query().groups[0]!, inTree: 'rp1' }] }), {}, 2],
  ['another query: fetched', 0, query({ limit: 5 }), {}, 2],
])('%s', async (_name, advance, second, options, fetches) => {
  const s = setup();
  await s.cache.get(query());
  s.advance(advance);
  await s.cache.get(second, options);
  expect(s.fetch).toHaveBeenCalledTimes(fetches);
});

test('an empty answer is never reused (capacity may come back)', async () => {
  const s = setup();
  s.setCandidates(0);
  await s.cache.get(query());
  s.setCandidates(1);
  expect((await s.cache.get(query())).allocationRequests).toHaveLength(1);
  expect(s.fetch).toHaveBeenCalledTimes(2);
});

test('own claims are charged to the cached summaries; a fresh read replaces the copy', async () => {
  const s = setup();
  await s.cache.get(query());
  s.cache.consume({ allocations: [{ resourceProviderUuid: 'rp1', resources: { VCPU: 3 } }], mappings: {} });
  expect((await s.cache.get(query())).providerSummaries.rp1?.resources.VCPU?.used).toBe(3);
  s.setUsed(5);
  await s.cache.get(query(), { fresh: true });
  expect((await s.cache.get(query())).providerSummaries.rp1?.resources.VCPU?.used).toBe(5);
  expect(s.fetch).toHaveBeenCalledTimes(2);
});

test('concurrent misses of one query share one fetch; TTL 0 never caches', async () => {
  const s = setup();
  await Promise.all([s.cache.get(query()), s.cache.get(query()), s.cache.get(query())]);
  expect(s.fetch).toHaveBeenCalledTimes(1);
  const off = setup(0);
  await off.cache.get(query());
  await off.cache.get(query());
  expect(off.fetch).toHaveBeenCalledTimes(2);
});

describe('refresh ahead', () => {
  function ahead() {
    let now = 0;
    let used = 0;
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    const fetch = jest.fn(async (_: GetAllocationCandidatesRequest) => {
      const u = used;
      await gate;
      return answer(u);
    });
    const cache = new CandidateCache(fetch, 1000, () => now, 400);
    return {
      cache,
      fetch,
      advance: (ms: number) => {
        now += ms;
      },
      setUsed: (u: number) => {
        used = u;
      },
      hold: () => {
        gate = new Promise((r) => {
          release = r;
        });
      },
      release: () => release(),
    };
  }

  test('past refreshAfter the copy still answers at once and one background fetch replaces it', async () => {
    const s = ahead();
    await s.cache.get(query());
    s.advance(500);
    s.setUsed(4);
    s.hold();
    const served = await s.cache.get(query());
    expect(served.providerSummaries.rp1?.resources.VCPU?.used).toBe(0); // the old copy, not waiting for placement
    await s.cache.get(query());
    expect(s.fetch).toHaveBeenCalledTimes(2); // one refresh in flight, not one per request
    expect(s.cache.stats.refreshesAhead).toBe(1);
    s.release();
    await new Promise((r) => setImmediate(r));
    expect((await s.cache.get(query())).providerSummaries.rp1?.resources.VCPU?.used).toBe(4);
    expect(s.fetch).toHaveBeenCalledTimes(2);
  });

  test('before refreshAfter nothing is fetched; past the TTL the request waits for a fetch', async () => {
    const s = ahead();
    await s.cache.get(query());
    s.advance(399);
    await s.cache.get(query());
    expect(s.fetch).toHaveBeenCalledTimes(1);
    s.advance(700);
    s.setUsed(2);
    expect((await s.cache.get(query())).providerSummaries.rp1?.resources.VCPU?.used).toBe(2);
    expect(s.cache.stats.refreshesAhead).toBe(0);
  });

  test('a failed background refresh is counted and the copy keeps answering', async () => {
    let now = 0;
    let fail = false;
    const fetch = jest.fn((_: GetAllocationCandidatesRequest) =>
      fail ? Promise.reject(new Error('placement down')) : Promise.resolve(answer(1)),
    );
    const cache = new CandidateCache(fetch, 1000, () => now, 400);
    await cache.get(query());
    fail = true;
    now = 500;
    expect((await cache.get(query())).allocationRequests).toHaveLength(1);
    await new Promise((r) => setImmediate(r));
    expect(cache.stats.refreshErrors).toBe(1);
    expect((await cache.get(query())).allocationRequests).toHaveLength(1);
  });
});

test('fresh reads during a fetch in flight share one fetch queued behind it, which starts after them', async () => {
  let used = 0;
  let release: () => void = () => undefined;
  const gates: Promise<void>[] = [
    new Promise((r) => {
      release = r;
    }),
  ];
  const fetch = jest.fn(async (_: GetAllocationCandidatesRequest) => {
    const seen = used; // what placement holds when the query starts
    const gate = gates.shift();
    if (gate !== undefined) await gate;
    return answer(seen);
  });
  const cache = new CandidateCache(fetch, 1000, () => 0);
  const first = cache.get(query()); // in flight, reads used = 0
  used = 5; // claims land; then three refusals ask for fresh reads
  const fresh = [cache.get(query(), { fresh: true }), cache.get(query(), { fresh: true }), cache.get(query(), { fresh: true })];
  release();
  expect((await first).providerSummaries.rp1?.resources.VCPU?.used).toBe(0);
  for (const r of await Promise.all(fresh)) expect(r.providerSummaries.rp1?.resources.VCPU?.used).toBe(5);
  expect(fetch).toHaveBeenCalledTimes(2);
  // with nothing in flight, a fresh read starts at once
  used = 7;
  expect((await cache.get(query(), { fresh: true })).providerSummaries.rp1?.resources.VCPU?.used).toBe(7);
  expect(fetch).toHaveBeenCalledTimes(3);
});
