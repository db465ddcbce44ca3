import { DecisionGate } from './decision-gate';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve: () => void = () => undefined;
  let reject: (e: Error) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('at most `limit` decisions run at once; the others start in arrival order as slots free', async () => {
  const gate = new DecisionGate(2);
  const work = Array.from({ length: 5 }, () => deferred());
  const started: number[] = [];
  const runs = work.map((w, i) =>
    gate.run(async () => {
      started.push(i);
      await w.promise;
      return i;
    }),
  );
  await tick();
  expect(started).toEqual([0, 1]);
  work[1]?.resolve();
  await tick();
  expect(started).toEqual([0, 1, 2]);
  work[0]?.reject(new Error('boom')); // a failure frees its slot too
  await tick();
  expect(started).toEqual([0, 1, 2, 3]);
  for (const w of work.slice(2)) w.resolve();
  const settled = await Promise.allSettled(runs);
  expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  expect(gate.stats).toEqual({ maxRunning: 2, queued: 3 });
  // all slots are free again: two run at once without queueing
  const again = [deferred(), deferred()];
  const more = again.map((w) => gate.run(() => w.promise));
  await tick();
  expect(gate.stats.queued).toBe(3);
  again.forEach((w) => w.resolve());
  await Promise.all(more);
});

test('a bad limit is refused', () => {
  expect(() => new DecisionGate(0)).toThrow(RangeError);
  expect(() => new DecisionGate(1.5)).toThrow(RangeError);
});
