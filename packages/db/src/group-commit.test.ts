import { AsyncLocalStorage } from 'node:async_hooks';
import { GroupCommit } from './group-commit';

/** A statement that doubles numbers, refuses negative ones (the whole batch), and records each batch it ran. */
function doubler(): { gc: GroupCommit<number, number>; batches: number[][] } {
  const batches: number[][] = [];
  const gc = new GroupCommit<number, number>(
    async (items) => {
      batches.push([...items]);
      await new Promise((r) => setTimeout(r, 5));
      if (items.some((x) => x < 0)) throw new Error(`refused ${items.filter((x) => x < 0).join(',')}`);
      return items.map((x) => x * 2);
    },
    { maxBatch: 3 },
  );
  return { gc, batches };
}

test('writes queued together go together (at most maxBatch), each answered with its own result', async () => {
  const { gc, batches } = doubler();
  expect(await Promise.all([1, 2, 3, 4, 5].map((x) => gc.write(x)))).toEqual([2, 4, 6, 8, 10]);
  expect(batches).toEqual([
    [1, 2, 3],
    [4, 5],
  ]);
  expect(gc.stats).toEqual({ writes: 5, statements: 2, batches: 2, batchedWrites: 5, largestBatch: 3, fallbacks: 0 });
});

test('a lone write goes at once; writes arriving while it runs go in the next statement', async () => {
  const { gc, batches } = doubler();
  const first = gc.write(1);
  await new Promise((r) => setTimeout(r, 1));
  const later = [gc.write(2), gc.write(3)];
  expect(await Promise.all([first, ...later])).toEqual([2, 4, 6]);
  expect(batches).toEqual([[1], [2, 3]]);
});

test("a failed batch is sent again write by write: only the refused write fails, with its own statement's error", async () => {
  const { gc, batches } = doubler();
  const r = await Promise.allSettled([gc.write(1), gc.write(-2), gc.write(3)]);
  expect(r).toEqual([
    { status: 'fulfilled', value: 2 },
    { status: 'rejected', reason: new Error('refused -2') },
    { status: 'fulfilled', value: 6 },
  ]);
  expect(batches).toEqual([[1, -2, 3], [1], [-2], [3]]);
  expect(gc.stats.fallbacks).toBe(1);
});

test('a statement answering the wrong number of results fails its writes; maxBatch must be a positive integer', async () => {
  const gc = new GroupCommit<number, number>(async () => []);
  await expect(Promise.all([gc.write(1), gc.write(2)])).rejects.toThrow('GroupCommit: 1 writes answered 0 results');
  expect(() => new GroupCommit(async () => [], { maxBatch: 0 })).toThrow(/maxBatch/);
});

test("'all-fail': every write of a failed batch gets the statement's error, none is sent again", async () => {
  const batches: number[][] = [];
  const gc = new GroupCommit<number, number>(
    async (items) => {
      batches.push([...items]);
      throw new Error('connection lost');
    },
    { onBatchError: 'all-fail' },
  );
  const r = await Promise.allSettled([gc.write(1), gc.write(2)]);
  expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
  expect(batches).toEqual([[1, 2]]);
  expect(gc.stats.fallbacks).toBe(0);
});

test('a write its check refuses fails alone, before it joins a batch; the others are sent', async () => {
  const batches: string[][] = [];
  const gc = new GroupCommit<string, string>(
    async (items) => {
      batches.push([...items]);
      return items.map((x) => x.toUpperCase());
    },
    {
      onBatchError: 'all-fail',
      check: (x) => {
        if (x === '') throw new Error('empty');
      },
    },
  );
  const r = await Promise.allSettled([gc.write('a'), gc.write(''), gc.write('b')]);
  expect(r).toEqual([
    { status: 'fulfilled', value: 'A' },
    { status: 'rejected', reason: new Error('empty') },
    { status: 'fulfilled', value: 'B' },
  ]);
  expect(batches).toEqual([['a', 'b']]);
  expect(gc.stats.writes).toBe(2);
});

test("a batch's statement runs in its first write's async context (its trace), not the drain starter's", async () => {
  const als = new AsyncLocalStorage<string>();
  const seen: (string | undefined)[] = [];
  const gc = new GroupCommit<number, number>(async (items) => {
    seen.push(als.getStore());
    await new Promise((r) => setTimeout(r, 5));
    return items;
  });
  const first = als.run('create-1', () => gc.write(1));
  await new Promise((r) => setTimeout(r, 1));
  const later = [als.run('create-2', () => gc.write(2)), als.run('create-3', () => gc.write(3))];
  await Promise.all([first, ...later]);
  expect(seen).toEqual(['create-1', 'create-2']);
});
