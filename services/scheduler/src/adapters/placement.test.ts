import { FailureError, GrpcStatus, makeFailure } from '@cellsched/grpc';
import { PLACEMENT_CAPACITY_EXCEEDED, PLACEMENT_GROUP_POLICY, PlacementClient, type PlacementGrpc } from '@cellsched/placement-client';
import type { AllocationCandidate, ClaimManyRequest, ClaimRequest } from '@cellsched/wire';
import { PlacementClaimer } from './placement';

const candidate = (rp: string): AllocationCandidate => ({
  allocations: [{ resourceProviderUuid: rp, resources: { VCPU: 1, MEMORY_MB: 512 } }],
  mappings: {},
});
const consumer = (uuid: string) => ({ consumerUuid: uuid, projectId: 'p', userId: 'u' });

/** A fake placement gRPC client: claims on `full` do not fit, claims with a group on `taken` break its policy; records the requests. */
function fakeGrpc() {
  const requests: ClaimRequest[] = [];
  const answer = (r: ClaimRequest) => {
    const rp = r.consumer?.allocations[0]?.resourceProviderUuid;
    if (rp === 'full') return makeFailure(PLACEMENT_CAPACITY_EXCEEDED, 'no room');
    return rp === 'taken' && r.group !== undefined ? makeFailure(PLACEMENT_GROUP_POLICY, 'another member is there') : undefined;
  };
  const grpc = {
    claim: jest.fn(async (r: ClaimRequest) => {
      requests.push(r);
      const f = answer(r);
      if (f !== undefined) throw new FailureError(f, { status: GrpcStatus.FAILED_PRECONDITION });
      return { consumerGeneration: 1 };
    }),
    claimMany: jest.fn(async (r: ClaimManyRequest, _options?: { idempotent?: boolean }) => {
      requests.push(...r.claims);
      return { results: r.claims.map((c) => ({ consumerGeneration: 1, failure: answer(c) })) };
    }),
    release: jest.fn(async (r: { consumerUuids: string[] }) => ({ released: r.consumerUuids.slice(0, 1) })),
  };
  return { client: new PlacementClient({ grpc: grpc as unknown as PlacementGrpc }), grpc, requests };
}

test("claims go to placement as the consumer's INSTANCE allocations, concurrent ones in one ClaimMany; each success charges its candidate", async () => {
  const fake = fakeGrpc();
  const charged: AllocationCandidate[] = [];
  const claimer = new PlacementClaimer(fake.client, (c) => charged.push(c));
  const first = claimer.claim(consumer('a'), candidate('rp1'), { replace: true });
  await Promise.resolve();
  const rest = [
    claimer.claim(consumer('b'), candidate('full'), { replace: true }),
    claimer.claim(consumer('c'), candidate('rp2'), { replace: false }),
  ];
  expect((await Promise.all([first, ...rest])).map((o) => o.kind)).toEqual(['claimed', 'no_capacity', 'claimed']);
  expect(fake.requests[0]).toEqual({
    consumer: {
      consumerUuid: 'a',
      projectId: 'p',
      userId: 'u',
      consumerType: 'INSTANCE',
      allocations: [{ resourceProviderUuid: 'rp1', resources: { VCPU: 1, MEMORY_MB: 512 } }],
    },
    replace: true,
    group: undefined,
  });
  expect(fake.requests.map((r) => r.replace)).toEqual([true, true, false]);
  expect(fake.grpc.claimMany).toHaveBeenCalledTimes(1);
  expect(fake.grpc.claimMany.mock.calls[0]?.[1]).toEqual({ idempotent: false }); // one non-replace claim: the call is not retried
  expect(charged.map((c) => c.allocations[0]?.resourceProviderUuid)).toEqual(['rp1', 'rp2']);
  expect(claimer.stats).toMatchObject({ claimed: 2, noCapacity: 1, claimCalls: 1, claimManyCalls: 1, released: 0 });
});

test('release sends the consumers once and counts what placement released; nothing to release sends nothing', async () => {
  const fake = fakeGrpc();
  const claimer = new PlacementClaimer(fake.client);
  await claimer.release([]);
  await claimer.release(['a', 'b']);
  expect(fake.grpc.release.mock.calls.map((c) => c[0])).toEqual([{ consumerUuids: ['a', 'b'] }]);
  expect(claimer.stats.released).toBe(1);
});

test("each claim carries its consumer's server group (Claim and ClaimMany); placement.claim.group_policy is the group_policy outcome", async () => {
  const fake = fakeGrpc();
  const charged: AllocationCandidate[] = [];
  const claimer = new PlacementClaimer(fake.client, (c) => charged.push(c));
  const group = { uuid: 'g1', policy: 'anti-affinity', maxServerPerHost: 2 };
  const lone = claimer.claim({ ...consumer('lone'), group }, candidate('rp0'), { replace: true });
  await Promise.resolve();
  const batch = [
    claimer.claim({ ...consumer('refused'), group }, candidate('taken'), { replace: true }),
    claimer.claim(consumer('plain'), candidate('taken'), { replace: true }),
  ];
  expect([await lone, ...(await Promise.all(batch))].map((o) => o.kind)).toEqual(['claimed', 'group_policy', 'claimed']);
  expect(fake.requests.map((r) => r.group)).toEqual([group, group, undefined]);
  expect(claimer.stats).toMatchObject({ claimed: 2, groupPolicy: 1, claimCalls: 1, claimManyCalls: 1 });
  expect(charged.map((c) => c.allocations[0]?.resourceProviderUuid)).toEqual(['rp0', 'taken']);
});
