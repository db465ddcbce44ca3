import type { CastContext } from '@cellsched/bus';
import { FailureError, makeFailure } from '@cellsched/grpc';
import { isTransient, retryTransient, retryWhileTransient } from './transient-retry';

const warned: string[] = [];
const ctx = { logger: { warn: (_fields: unknown, msg: string) => warned.push(msg) } } as unknown as CastContext;
const unavailable = (): FailureError => new FailureError(makeFailure('grpc.unavailable', 'connect ECONNREFUSED', { retryable: true }));
const pgDown = (): Error => Object.assign(new Error('the database system is shutting down'), { code: '57P03' });

function clock(): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: (ms) => {
      slept.push(ms);
      t += ms;
      return Promise.resolve();
    },
    slept,
  };
}

test('classifies: retryable Failures, retryable bus errors and lost PostgreSQL connections are transient; the rest is not', () => {
  expect(isTransient(unavailable())).toBe(true);
  expect(isTransient(pgDown())).toBe(true);
  expect(isTransient(Object.assign(new Error('no broker'), { code: 'bus.unavailable', retryable: true }))).toBe(true);
  // placement-client's PlacementUnreachableError and the bus's BusError say so with `retryable`
  expect(
    isTransient(
      Object.assign(new Error('placement at http://127.0.0.1:1 is unreachable'), {
        code: 'placement_client.placement.unreachable',
        retryable: true,
      }),
    ),
  ).toBe(true);
  expect(isTransient(new FailureError(makeFailure('placement.allocation.capacity_exceeded', 'full', { retryable: false })))).toBe(false);
  expect(isTransient(new TypeError('bug'))).toBe(false);
  expect(isTransient(Object.assign(new Error('unique violation'), { code: '23505' }))).toBe(false);
});

test('a handler failing while its dependency is down is rerun with backoff in the same delivery until it succeeds', async () => {
  const c = clock();
  const errors = [unavailable(), pgDown(), unavailable()];
  let calls = 0;
  const h = retryTransient(
    async () => {
      calls++;
      const e = errors.shift();
      if (e) throw e;
      return Promise.resolve();
    },
    { budgetMs: 60_000, sleep: c.sleep, now: c.now },
  );
  await h({}, ctx);
  expect(calls).toBe(4);
  expect(c.slept).toEqual([250, 500, 1000]);
  expect(warned.slice(-3)).toEqual(Array(3).fill('cast handler hit an unavailable dependency, retrying in-delivery'));
});

test('a non-transient failure is thrown at once (the bus decides), without a retry', async () => {
  const c = clock();
  let calls = 0;
  const bug = new TypeError('bug');
  const h = retryTransient(
    async () => {
      calls++;
      return Promise.reject(bug);
    },
    { budgetMs: 60_000, sleep: c.sleep, now: c.now },
  );
  await expect(h({}, ctx)).rejects.toBe(bug);
  expect(calls).toBe(1);
  expect(c.slept).toEqual([]);
});

test('past the budget the last transient failure goes to the bus (redelivered later), the pauses capped', async () => {
  const c = clock();
  let calls = 0;
  const h = retryTransient(
    async () => {
      calls++;
      return Promise.reject(unavailable());
    },
    { budgetMs: 20_000, maxDelayMs: 4000, sleep: c.sleep, now: c.now },
  );
  await expect(h({}, ctx)).rejects.toMatchObject({ code: 'grpc.unavailable' });
  expect(c.slept).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000, 4000]); // 19,750 ms: one more would pass 20 s
  expect(c.now()).toBeLessThanOrEqual(20_000);
  expect(calls).toBe(9);
});

test('retryWhileTransient: any rerunnable job (an audit pass) with its own notion of transient; the value comes back', async () => {
  const c = clock();
  const seen: number[] = [];
  let calls = 0;
  const busy = new Error('503');
  const v = await retryWhileTransient(
    async () => {
      calls++;
      if (calls < 3) throw busy;
      return Promise.resolve(42);
    },
    { budgetMs: 10_000, sleep: c.sleep, now: c.now, retryable: (e) => e === busy, onRetry: (_e, attempt) => seen.push(attempt) },
  );
  expect(v).toBe(42);
  expect(seen).toEqual([1, 2]);
  await expect(
    retryWhileTransient(() => Promise.reject(new TypeError('bug')), {
      budgetMs: 10_000,
      sleep: c.sleep,
      now: c.now,
      retryable: () => false,
    }),
  ).rejects.toThrow('bug');
});
