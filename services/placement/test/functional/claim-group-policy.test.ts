/**
 * Server-group policies kept by placement at claim time (gRPC Claim/ClaimMany with a group,
 * migration 007): anti-affinity (one member per compute node, or max_server_per_host), affinity
 * (every member on one compute node), a reschedule onto an alternate another member took is
 * refused with `placement.claim.group_policy` and writes nothing, redelivery is idempotent,
 * members racing for one host through two placement processes (two pools: the lock is
 * PostgreSQL's, not the process's) get exactly one winner, the group row dies with the consumer
 * whichever path deletes it, soft-* policies and REST writes are not checked.
 */
import { randomUUID } from 'node:crypto';
import { createPool } from '@cellsched/db';
import { FailureError, GrpcStatus, createGrpcClient, startGrpcServer, type GrpcClient, type RunningGrpcServer } from '@cellsched/grpc';
import { PlacementServiceClient, type ClaimRequest, type ConsumerGroup } from '@cellsched/wire';
import type { Pool } from 'pg';
import pino from 'pino';
import { placementServiceBinding } from '../../src/adapters/grpc/placement-service';
import { startPlacement, type PlacementHarness } from './api-helpers';
import { ProviderBuilder, type ProviderRef } from './candidates-fixture';

type Client = GrpcClient<typeof PlacementServiceClient.service>;
const GROUP_POLICY = 'placement.claim.group_policy';

let h: PlacementHarness;
let otherPool: Pool;
const servers: RunningGrpcServer[] = [];
/** One client per placement "process" (each its own pool and claim batcher). */
let one: Client;
let two: Client;
let b: ProviderBuilder;

beforeAll(async () => {
  h = await startPlacement('claim_group_policy', 20);
  otherPool = createPool({ url: h.db.url, max: 20 });
  b = new ProviderBuilder(h.db.pool);
  for (const pool of [h.db.pool, otherPool]) {
    servers.push(
      await startGrpcServer({ host: '127.0.0.1', port: 0, services: [placementServiceBinding(pool)], logger: pino({ level: 'silent' }) }),
    );
  }
  [one, two] = servers.map((s) =>
    createGrpcClient(PlacementServiceClient, { addresses: [s.address], deadlineMs: 20_000, maxAttempts: 1 }),
  ) as [Client, Client];
});
afterAll(async () => {
  one.close();
  two.close();
  for (const s of servers) await s.shutdown();
  await otherPool.end();
  await h.close();
});

/** Compute nodes with room for many members each, so only the group's policy can refuse. */
async function nodes(n: number): Promise<ProviderRef[]> {
  const out: ProviderRef[] = [];
  for (let i = 0; i < n; i++) out.push(await b.provider(`cn-${randomUUID().slice(0, 8)}`, { inventories: { VCPU: { total: 64 } } }));
  return out;
}

const anti = (max = 0): ConsumerGroup => ({ uuid: randomUUID(), policy: 'anti-affinity', maxServerPerHost: max });
const affinity = (): ConsumerGroup => ({ uuid: randomUUID(), policy: 'affinity', maxServerPerHost: 0 });

function claimOf(member: string, rps: readonly ProviderRef[], group: ConsumerGroup | undefined, replace = true): ClaimRequest {
  return {
    consumer: {
      consumerUuid: member,
      projectId: 'p1',
      userId: 'u1',
      consumerType: 'INSTANCE',
      allocations: rps.map((rp) => ({ resourceProviderUuid: rp.uuid, resources: { VCPU: 1 } })),
    },
    replace,
    group,
  };
}

/** 'ok', or the Failure's code (its metadata kept for the caller). */
async function outcome(p: Promise<unknown>): Promise<{ code: string; status?: number; failure?: FailureError['failure'] }> {
  try {
    await p;
    return { code: 'ok' };
  } catch (err) {
    if (!(err instanceof FailureError)) throw err;
    return { code: err.code, status: err.status, failure: err.failure };
  }
}

/** Provider uuids the consumer holds allocations on (sorted). */
async function heldOn(consumer: string): Promise<string[]> {
  const r = await h.db.pool.query<{ u: string }>(
    `SELECT DISTINCT rp.uuid::text AS u FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id
    WHERE a.consumer_id = $1 ORDER BY 1`,
    [consumer],
  );
  return r.rows.map((x) => x.u);
}

async function groupRow(consumer: string): Promise<{ group_uuid: string; policy: string; max_server_per_host: number } | undefined> {
  return (
    await h.db.pool.query('SELECT group_uuid::text, policy, max_server_per_host FROM consumer_groups WHERE consumer_uuid = $1', [consumer])
  ).rows[0];
}

test('anti-affinity: a second member on the node is refused (nothing written); a reschedule onto an alternate another member took is refused; a redelivery is not', async () => {
  const [cn1, cn2, cn3] = (await nodes(3)) as [ProviderRef, ProviderRef, ProviderRef];
  const g = anti();
  const [a, bm] = [randomUUID(), randomUUID()];
  expect((await outcome(one.claim(claimOf(a, [cn1], g)))).code).toBe('ok');
  expect(await groupRow(a)).toEqual({ group_uuid: g.uuid, policy: 'anti-affinity', max_server_per_host: 1 });

  const refused = await outcome(one.claim(claimOf(bm, [cn1], g)));
  expect([refused.code, refused.status]).toEqual([GROUP_POLICY, GrpcStatus.FAILED_PRECONDITION]);
  expect(refused.failure).toMatchObject({
    expected: true,
    retryable: false,
    metadata: {
      group_uuid: g.uuid,
      policy: 'anti-affinity',
      resource_provider_uuid: cn1.uuid,
      resource_provider_name: cn1.name,
      member_uuid: a,
      members: '1',
    },
  });
  expect(refused.failure?.message).toContain(`compute node '${cn1.name}'`);
  expect([await heldOn(bm), await groupRow(bm)]).toEqual([[], undefined]);

  expect((await outcome(one.claim(claimOf(bm, [cn2], g)))).code).toBe('ok');
  // the reschedule of A (its claim moves off cn1) onto cn2, which B took meanwhile: refused, A keeps cn1
  expect((await outcome(two.claim(claimOf(a, [cn2], g)))).code).toBe(GROUP_POLICY);
  expect(await heldOn(a)).toEqual([cn1.uuid]);
  // onto cn3: moved; and the same claim again (a redelivered reschedule) succeeds, A counted once
  expect((await outcome(two.claim(claimOf(a, [cn3], g)))).code).toBe('ok');
  expect((await outcome(one.claim(claimOf(a, [cn3], g)))).code).toBe('ok');
  expect(await heldOn(a)).toEqual([cn3.uuid]);
  // cn1 is free again for the group
  expect((await outcome(one.claim(claimOf(randomUUID(), [cn1], g)))).code).toBe('ok');
});

test('anti-affinity with max_server_per_host 2 (2.64): two members per node, the third refused', async () => {
  const [cn1, cn2] = (await nodes(2)) as [ProviderRef, ProviderRef];
  const g = anti(2);
  const m = [randomUUID(), randomUUID(), randomUUID()] as const;
  expect((await outcome(one.claim(claimOf(m[0], [cn1], g)))).code).toBe('ok');
  expect((await outcome(one.claim(claimOf(m[1], [cn1], g)))).code).toBe('ok');
  const third = await outcome(one.claim(claimOf(m[2], [cn1], g)));
  expect([third.code, third.failure?.metadata.members, third.failure?.metadata.max_server_per_host]).toEqual([GROUP_POLICY, '2', '2']);
  expect(third.failure?.message).toContain('at most 2 members per host');
  expect((await outcome(one.claim(claimOf(m[2], [cn2], g)))).code).toBe('ok');
});

test("affinity: every member on the first member's node; a member cannot move off it while others are there", async () => {
  const [cn1, cn2] = (await nodes(2)) as [ProviderRef, ProviderRef];
  const g = affinity();
  const [a, bm] = [randomUUID(), randomUUID()];
  expect((await outcome(one.claim(claimOf(a, [cn2], g)))).code).toBe('ok'); // the first member goes anywhere
  expect((await outcome(one.claim(claimOf(a, [cn1], g)))).code).toBe('ok'); // alone: it may move
  const elsewhere = await outcome(one.claim(claimOf(bm, [cn2], g)));
  expect([elsewhere.code, elsewhere.failure?.metadata.resource_provider_uuid, elsewhere.failure?.metadata.member_uuid]).toEqual([
    GROUP_POLICY,
    cn1.uuid,
    a,
  ]);
  expect(elsewhere.failure?.message).toContain('affinity policy');
  expect((await outcome(one.claim(claimOf(bm, [cn1], g)))).code).toBe('ok');
  expect((await outcome(one.claim(claimOf(a, [cn2], g)))).code).toBe(GROUP_POLICY); // B is on cn1
  expect(await heldOn(a)).toEqual([cn1.uuid]);
});

test('nested providers count for their compute node, sharing providers for none', async () => {
  const [cn1, cn2] = (await nodes(2)) as [ProviderRef, ProviderRef];
  const numa = await b.provider(`numa-${randomUUID().slice(0, 8)}`, { parent: cn1, inventories: { VCPU: { total: 8 } } });
  const shared = await b.provider(`ss-${randomUUID().slice(0, 8)}`, {
    inventories: { VCPU: { total: 64 } },
    traits: ['MISC_SHARES_VIA_AGGREGATE'],
  });
  const g = anti();
  expect((await outcome(one.claim(claimOf(randomUUID(), [numa, shared], g)))).code).toBe('ok');
  // a member on cn1 itself: cn1's tree already holds one (through its NUMA child)
  expect((await outcome(one.claim(claimOf(randomUUID(), [cn1], g)))).code).toBe(GROUP_POLICY);
  // a member on cn2 using the same sharing provider: not the same host
  expect((await outcome(one.claim(claimOf(randomUUID(), [cn2, shared], g)))).code).toBe('ok');
});

test("soft policies are not enforced nor recorded; a claim without a group checks nothing and keeps the consumer's group", async () => {
  const [cn1] = (await nodes(1)) as [ProviderRef];
  for (const policy of ['soft-anti-affinity', 'soft-affinity']) {
    const g = { uuid: randomUUID(), policy, maxServerPerHost: 0 };
    const [x, y] = [randomUUID(), randomUUID()];
    expect([(await outcome(one.claim(claimOf(x, [cn1], g)))).code, (await outcome(one.claim(claimOf(y, [cn1], g)))).code]).toEqual([
      'ok',
      'ok',
    ]);
    expect(await groupRow(x)).toBeUndefined();
  }
  const g = anti();
  const [a, c] = [randomUUID(), randomUUID()];
  expect((await outcome(one.claim(claimOf(a, [cn1], g)))).code).toBe('ok');
  const [cn2] = (await nodes(1)) as [ProviderRef];
  expect((await outcome(one.claim(claimOf(a, [cn2], undefined)))).code).toBe('ok'); // no group: as before 007 (the audit's re-claim)
  expect(await groupRow(a)).toMatchObject({ group_uuid: g.uuid });
  expect((await outcome(one.claim(claimOf(c, [cn2], g)))).code).toBe(GROUP_POLICY); // A still counts, now on cn2
});

test('the group row dies with its consumer: Release, DELETE /allocations, a claim of nothing, a REST PUT of nothing', async () => {
  const [cn1] = (await nodes(1)) as [ProviderRef];
  const g = anti(64);
  const members = Array.from({ length: 4 }, () => randomUUID());
  for (const m of members) expect((await outcome(one.claim(claimOf(m, [cn1], g)))).code).toBe('ok');
  const count = async (): Promise<number> =>
    (await h.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM consumer_groups WHERE group_uuid = $1', [g.uuid])).rows[0]?.n ??
    -1;
  expect(await count()).toBe(4);
  const [m0, m1, m2, m3] = members as [string, string, string, string];
  await one.release({ consumerUuids: [m0] });
  expect((await h.call('DELETE', `/allocations/${m1}`)).status).toBe(204);
  expect(await outcome(one.claim({ ...claimOf(m2, [], g) }))).toEqual({ code: 'ok' });
  const gen = (await h.call('GET', `/allocations/${m3}`)).json.consumer_generation as number;
  expect(
    (
      await h.call('PUT', `/allocations/${m3}`, {
        allocations: {},
        project_id: 'p1',
        user_id: 'u1',
        consumer_generation: gen,
        consumer_type: 'INSTANCE',
      })
    ).status,
  ).toBe(204);
  expect(await count()).toBe(0);
});

test('REST writes are not checked: PUT /allocations puts a member where another is, and leaves its group row', async () => {
  const [cn1, cn2] = (await nodes(2)) as [ProviderRef, ProviderRef];
  const g = anti();
  const [a, bm] = [randomUUID(), randomUUID()];
  expect((await outcome(one.claim(claimOf(a, [cn1], g)))).code).toBe('ok');
  expect((await outcome(one.claim(claimOf(bm, [cn2], g)))).code).toBe('ok');
  const gen = (await h.call('GET', `/allocations/${bm}`)).json.consumer_generation as number;
  const put = await h.call('PUT', `/allocations/${bm}`, {
    allocations: { [cn1.uuid]: { resources: { VCPU: 1 } } },
    project_id: 'p1',
    user_id: 'u1',
    consumer_generation: gen,
    consumer_type: 'INSTANCE',
  });
  expect(put.status).toBe(204);
  expect(await groupRow(bm)).toMatchObject({ group_uuid: g.uuid });
});

test('bad groups are INVALID_ARGUMENT and write nothing', async () => {
  const [cn1] = (await nodes(1)) as [ProviderRef];
  const bad: ConsumerGroup[] = [
    { uuid: 'not-a-uuid', policy: 'anti-affinity', maxServerPerHost: 0 },
    { uuid: randomUUID(), policy: 'anti_affinity', maxServerPerHost: 0 },
    { uuid: randomUUID(), policy: 'affinity', maxServerPerHost: 2 },
    { uuid: randomUUID(), policy: 'anti-affinity', maxServerPerHost: -1 },
  ];
  for (const g of bad) {
    const m = randomUUID();
    const r = await outcome(one.claim(claimOf(m, [cn1], g)));
    expect([r.code, r.status]).toEqual(['placement.request.invalid', GrpcStatus.INVALID_ARGUMENT]);
    expect(await heldOn(m)).toEqual([]);
  }
});

test("the claim's own refusals come first: a member over capacity is told so, not the group", async () => {
  const small = await b.provider(`small-${randomUUID().slice(0, 8)}`, { inventories: { VCPU: { total: 1 } } });
  const g = anti();
  expect((await outcome(one.claim(claimOf(randomUUID(), [small], g)))).code).toBe('ok');
  expect((await outcome(one.claim(claimOf(randomUUID(), [small], g)))).code).toBe('placement.allocation.capacity_exceeded');
});

test('members racing for one node through two placement processes: exactly one wins, every time', async () => {
  for (let round = 0; round < 5; round++) {
    const [cn1] = (await nodes(1)) as [ProviderRef];
    const g = anti();
    const members = Array.from({ length: 12 }, () => randomUUID());
    // half through each process, Claim and ClaimMany mixed, all at once
    const results = await Promise.all([
      ...members.slice(0, 4).map((m) => outcome(one.claim(claimOf(m, [cn1], g)))),
      ...members.slice(4, 8).map((m) => outcome(two.claim(claimOf(m, [cn1], g)))),
      two
        .claimMany({ claims: members.slice(8).map((m) => claimOf(m, [cn1], g)) })
        .then((r) => r.results.map((x) => ({ code: x.failure?.code ?? 'ok' }))),
    ]);
    const codes = results.flat().map((r) => r.code);
    expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
    expect(codes.filter((c) => c === GROUP_POLICY)).toHaveLength(11);
    const held = await h.db.pool.query<{ n: number }>(
      'SELECT count(DISTINCT consumer_id)::int AS n FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id WHERE rp.uuid = $1',
      [cn1.uuid],
    );
    expect(held.rows[0]?.n).toBe(1);
  }
});

test('a reschedule racing a new member for the same alternate, in every order: never two members on one node', async () => {
  for (let round = 0; round < 10; round++) {
    const [cn1, alt] = (await nodes(2)) as [ProviderRef, ProviderRef];
    const g = anti();
    const [a, bm] = [randomUUID(), randomUUID()];
    expect((await outcome(one.claim(claimOf(a, [cn1], g)))).code).toBe('ok');
    const [ra, rb] = await Promise.all([outcome(one.claim(claimOf(a, [alt], g))), outcome(two.claim(claimOf(bm, [alt], g)))]);
    expect([ra.code, rb.code].sort()).toEqual(['ok', GROUP_POLICY].sort());
    // the winner is on the alternate alone; the refused one is where it was (A on cn1) or nowhere (B)
    expect([await heldOn(a), await heldOn(bm)]).toEqual(ra.code === 'ok' ? [[alt.uuid], []] : [[cn1.uuid], [alt.uuid]]);
  }
});

/**
 * Runs `claims` while a second session holds consumer_groups exclusively, and lets it go only once
 * `waiters` sessions wait: every claim then reaches its policy check with the others in flight
 * (their writes made, not committed), the window a group lock must close.
 */
async function raced<T>(waiters: number, claims: () => Promise<T>[]): Promise<T[]> {
  const gate = await h.db.pool.connect();
  try {
    await gate.query('BEGIN');
    await gate.query('LOCK TABLE consumer_groups IN ACCESS EXCLUSIVE MODE');
    const running = Promise.all(claims());
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await h.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())',
      );
      if ((r.rows[0]?.n ?? 0) >= waiters) break;
      if (Date.now() > deadline) throw new Error('the claims never reached the gate');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await gate.query('COMMIT');
    return await running;
  } finally {
    gate.release();
  }
}

// NOTE: claims for one provider already wait for each other on its row lock; these races touch
// different providers (no common row lock), so only the group's lock makes them see each other.
test('first members of an affinity group racing onto different nodes: one wins, the other is refused', async () => {
  const [cn1, cn2] = (await nodes(2)) as [ProviderRef, ProviderRef];
  const g = affinity();
  const [a, bm] = [randomUUID(), randomUUID()];
  const codes = (await raced(2, () => [outcome(one.claim(claimOf(a, [cn1], g))), outcome(two.claim(claimOf(bm, [cn2], g)))])).map(
    (r) => r.code,
  );
  expect(codes.sort()).toEqual(['ok', GROUP_POLICY].sort());
  expect((await heldOn(a)).length + (await heldOn(bm)).length).toBe(1);
});

test('anti-affinity members racing onto two NUMA children of one node: one wins', async () => {
  const [cn1] = (await nodes(1)) as [ProviderRef];
  const numa = [
    await b.provider(`numa0-${randomUUID().slice(0, 8)}`, { parent: cn1, inventories: { VCPU: { total: 8 } } }),
    await b.provider(`numa1-${randomUUID().slice(0, 8)}`, { parent: cn1, inventories: { VCPU: { total: 8 } } }),
  ];
  const g = anti();
  const codes = (await raced(2, () => numa.map((n, i) => outcome((i === 0 ? one : two).claim(claimOf(randomUUID(), [n], g)))))).map(
    (r) => r.code,
  );
  expect(codes.sort()).toEqual(['ok', GROUP_POLICY].sort());
});
