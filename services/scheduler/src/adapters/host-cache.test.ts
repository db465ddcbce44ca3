import { HostCache } from './host-cache';

/** A database whose queries wait for `gate` while it is held, and count the cells' reads. Every answer is empty. */
function fakeDbs() {
  let gate: Promise<void> = Promise.resolve();
  let release: () => void = () => undefined;
  let cellReads = 0;
  const db = (cell: boolean) => ({
    query: async (text: string) => {
      if (cell && text.startsWith('SELECT greatest')) cellReads += 1;
      await gate;
      return { rows: text.startsWith('SELECT greatest') ? [{ next: new Date() }] : [] } as never;
    },
  });
  return {
    apiDb: db(false),
    cellDb: db(true),
    reads: () => cellReads,
    hold: () => {
      gate = new Promise((r) => {
        release = r;
      });
    },
    release: () => release(),
  };
}

async function settledWithin(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => {
    done = true;
  });
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

test('a copy a little stale answers at once (refresh in the background); one older than maxStaleMs waits for the refresh', async () => {
  let now = 0;
  const f = fakeDbs();
  const cache = new HostCache({
    cells: [{ uuid: 'c1', db: f.cellDb }],
    apiDb: f.apiDb,
    refreshMs: 1000,
    fullResyncMs: 600_000,
    maxStaleMs: 3000,
    now: () => now,
  });
  await cache.getComputeNodes([]);
  expect(f.reads()).toBe(1);
  now = 1500;
  f.hold();
  expect(await settledWithin(cache.getComputeNodes([]))).toBe(true); // answered from the copy
  expect(f.reads()).toBe(2); // while a refresh runs
  f.release();
  await new Promise((r) => setImmediate(r));
  now = 5000; // idle longer than maxStaleMs since the last refresh (at 1500)
  f.hold();
  const lookup = cache.getComputeNodes([]);
  expect(await settledWithin(lookup)).toBe(false); // waits for the refresh
  expect(f.reads()).toBe(3);
  f.release();
  await lookup;
});
