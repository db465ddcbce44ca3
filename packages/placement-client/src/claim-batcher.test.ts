import { FailureError, GrpcStatus, UNAVAILABLE_FAILURE_CODE, makeFailure } from '@cellsched/grpc';
import type { ClaimManyRequest, ClaimRequest, Failure } from '@cellsched/wire';
import { ClaimBatcher, type ClaimTransport, type SettledClaim } from './claim-batcher';
import { PLACEMENT_CAPACITY_EXCEEDED, PLACEMENT_CONCURRENT_UPDATE } from './claim-outcome';

/** A replace-claim of one VCPU on `rp` for `uuid`. */
const request = (uuid: string, rp = 'rp'): ClaimRequest => ({
  consumer: {
    consumerUuid: uuid,
    projectId: 'p',
    userId: 'u',
    consumerType: 'INSTANCE',
    allocations: [{ resourceProviderUuid: rp, resources: { VCPU: 1 } }],
  },
  replace: true,
  group: undefined,
});

/** A fake placement: answers each claim from `answer(consumerUuid)` (undefined: claimed); records the calls. */
function fakePlacement(answer: (consumer: string) => Failure | undefined, opts: { claimManyUnimplemented?: boolean } = {}) {
  const calls: string[][] = [];
  const claimOne = (r: ClaimRequest): Failure | undefined => answer(r.consumer?.consumerUuid ?? '');
  const client = {
    claim: jest.fn(async (r: ClaimRequest) => {
      calls.push([r.consumer?.consumerUuid ?? '']);
      const f = claimOne(r);
      if (f !== undefined) throw new FailureError(f, { status: GrpcStatus.FAILED_PRECONDITION });
      return { consumerGeneration: 1 };
    }),
    claimMany: jest.fn(async (r: ClaimManyRequest) => {
      if (opts.claimManyUnimplemented === true)
        throw new FailureError(makeFailure('grpc.not_implemented', 'no such method'), { status: GrpcStatus.UNIMPLEMENTED });
      calls.push(r.claims.map((c) => c.consumer?.consumerUuid ?? ''));
      return { results: r.claims.map((c) => ({ consumerGeneration: 1, failure: claimOne(c) })) };
    }),
  };
  return { client: client as unknown as ClaimTransport, calls, raw: client };
}

test('claims that arrive while a call is in flight go together in one ClaimMany, each answered on its own', async () => {
  const placement = fakePlacement(
    (c) =>
      (
        ({
          conflict: makeFailure(PLACEMENT_CONCURRENT_UPDATE, 'moved'),
          full: makeFailure(PLACEMENT_CAPACITY_EXCEEDED, 'no room'),
          broken: makeFailure('placement.resource_provider.not_found', 'gone'),
        }) as Record<string, Failure>
      )[c],
  );
  const claimed: string[] = [];
  const settled: SettledClaim[] = [];
  const claimer = new ClaimBatcher(placement.client, { onSettled: (s) => settled.push(s) });
  const first = claimer.claim(request('first', 'rp0'), () => claimed.push('rp0'));
  await Promise.resolve(); // the first claim leaves alone
  const names = ['ok1', 'conflict', 'full', 'broken', 'ok2'];
  const rest = names.map((n, i) =>
    claimer
      .claim(request(n, `rp${i + 1}`), () => claimed.push(`rp${i + 1}`))
      .then(
        (o) => o.kind,
        (e: FailureError) => e.code,
      ),
  );
  expect(await first).toEqual({ kind: 'claimed', consumerGeneration: 1 });
  expect(await Promise.all(rest)).toEqual(['claimed', 'conflict', 'no_capacity', 'placement.resource_provider.not_found', 'claimed']);
  expect(placement.calls).toEqual([['first'], names]);
  expect(claimer.stats).toMatchObject({ claimed: 3, conflict: 1, noCapacity: 1, claimCalls: 1, claimManyCalls: 1 });
  expect(claimed).toEqual(['rp0', 'rp1', 'rp5']);
  expect(settled.map((s) => [s.request.consumer?.consumerUuid, s.outcome, s.call])).toEqual([
    ['first', 'claimed', 'Claim'],
    ...names.map((n, i) => [
      n,
      ['claimed', PLACEMENT_CONCURRENT_UPDATE, PLACEMENT_CAPACITY_EXCEEDED, 'placement.resource_provider.not_found', 'claimed'][i],
      'ClaimMany of 5',
    ]),
  ]);
  expect(placement.raw.claimMany.mock.calls[0]?.[0].claims.every((c: ClaimRequest) => c.replace)).toBe(true);
});

test('a failed ClaimMany call fails each of its claims; an older placement without ClaimMany gets them one by one', async () => {
  const down = fakePlacement(() => undefined);
  down.raw.claimMany.mockRejectedValueOnce(
    new FailureError(makeFailure('grpc.unavailable', 'down', { retryable: true }), { status: GrpcStatus.UNAVAILABLE }),
  );
  const claimer = new ClaimBatcher(down.client);
  const all = ['a', 'b', 'c'].map((n) =>
    claimer.claim(request(n)).then(
      (o) => o.kind,
      (e: FailureError) => e.code,
    ),
  );
  expect(await Promise.all(all)).toEqual(['grpc.unavailable', 'grpc.unavailable', 'grpc.unavailable']);

  const old = fakePlacement(() => undefined, { claimManyUnimplemented: true });
  const claimer2 = new ClaimBatcher(old.client);
  const outcomes = await Promise.all(['a', 'b', 'c'].map((n) => claimer2.claim(request(n))));
  expect(outcomes.map((o) => o.kind)).toEqual(['claimed', 'claimed', 'claimed']);
  expect(old.calls).toEqual([['a'], ['b'], ['c']]);
  await claimer2.claim(request('d'));
  expect(old.raw.claimMany).toHaveBeenCalledTimes(1);
});

test('at most maxInFlight calls at once: claims arriving meanwhile wait and go together', async () => {
  const placement = fakePlacement(() => undefined);
  const gates: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const hold = async <T>(v: T): Promise<T> => {
    running += 1;
    most = Math.max(most, running);
    await new Promise<void>((r) => gates.push(r));
    running -= 1;
    return v;
  };
  placement.raw.claim.mockImplementation(async (r: ClaimRequest) => {
    placement.calls.push([r.consumer?.consumerUuid ?? '']);
    return hold({ consumerGeneration: 1 });
  });
  placement.raw.claimMany.mockImplementation(async (r: ClaimManyRequest) => {
    placement.calls.push(r.claims.map((c) => c.consumer?.consumerUuid ?? ''));
    return hold({ results: r.claims.map(() => ({ consumerGeneration: 1, failure: undefined })) });
  });
  const claimer = new ClaimBatcher(placement.client, { maxPerCall: 16, maxInFlight: 2 });
  const tick = () => new Promise((r) => setImmediate(r));
  const all = [claimer.claim(request('a'))];
  await tick();
  all.push(claimer.claim(request('b')));
  await tick();
  all.push(...['c', 'd', 'e'].map((n) => claimer.claim(request(n))));
  await tick();
  expect(placement.calls).toEqual([['a'], ['b']]); // two in flight; c, d, e wait
  gates.shift()?.();
  await tick();
  expect(placement.calls).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
  while (gates.length > 0) {
    gates.shift()?.();
    await tick();
  }
  expect((await Promise.all(all)).map((o) => o.kind)).toEqual(['claimed', 'claimed', 'claimed', 'claimed', 'claimed']);
  expect(most).toBe(2);
});

test('a claim of a ClaimMany that met placement without its database is sent again as a Claim (the client retries those)', async () => {
  let down = true;
  const placement = fakePlacement((c) =>
    c === 'b' && down ? makeFailure(UNAVAILABLE_FAILURE_CODE, 'db gone', { retryable: true }) : undefined,
  );
  const claimer = new ClaimBatcher(placement.client);
  const first = claimer.claim(request('a'));
  await Promise.resolve();
  const rest = ['b', 'c'].map((n) => claimer.claim(request(n)));
  placement.raw.claim.mockImplementationOnce(async (r: ClaimRequest) => {
    placement.calls.push([r.consumer?.consumerUuid ?? '']);
    return { consumerGeneration: 1 };
  });
  await first;
  down = false;
  expect((await Promise.all(rest)).map((o) => o.kind)).toEqual(['claimed', 'claimed']);
  expect(placement.calls).toEqual([['a'], ['b', 'c'], ['b']]);
});
