// Step 4's instance rows go into a cell through one group commit per cell pool, against real PostgreSQL.
import { randomUUID } from 'node:crypto';
import { CELL_DB_MIGRATIONS_DIR, getInstance, listInstanceActions } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { cellInstanceWriters } from '../../src/adapters/build-deps';

let cell: TestDatabase;
let other: TestDatabase;
beforeAll(async () => {
  [cell, other] = await Promise.all([
    createTestDatabase({ prefix: 'sc_ciw', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR }),
    createTestDatabase({ prefix: 'sc_ciw2', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR }),
  ]);
});
afterAll(async () => {
  await Promise.all([cell?.drop(), other?.drop()]);
});

const flavor = { id: 0, flavorid: '1', name: 'm1.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} };
const item = (uuid: string, host: string, requestId = `req-${uuid}`) => ({
  instance: { uuid, projectId: 'p', userId: 'u', flavor, vmState: 'building' as const, taskState: 'scheduling', host, node: host },
  action: { requestId, action: 'create', event: 'conductor_schedule_and_build_instances', host },
});

test('instances placed together in a cell share one statement; each is answered and written whole; each cell pool has its own writer', async () => {
  const writers = cellInstanceWriters();
  const w = writers(cell.pool);
  expect(writers(cell.pool)).toBe(w);
  expect(writers(other.pool)).not.toBe(w);
  const uuids = Array.from({ length: 12 }, () => randomUUID());
  const out = await Promise.all(uuids.map((u, i) => w.write(item(u, `h${i}`))));
  expect(out.map((x) => [x.created, x.instance.uuid, x.instance.host])).toEqual(uuids.map((u, i) => [true, u, `h${i}`]));
  expect(w.stats).toMatchObject({ writes: 12, statements: 1, batches: 1, batchedWrites: 12 });
  for (const [i, u] of uuids.entries()) {
    const [action] = await listInstanceActions(cell.pool, u);
    expect(action?.events.map((e) => [e.event, e.host, e.result])).toEqual([
      ['conductor_schedule_and_build_instances', `h${i}`, 'Success'],
    ]);
  }
  expect(await getInstance(other.pool, uuids[0] ?? '')).toBeUndefined();
});

test('a failed batch is written item by item: a redelivery in the same batch as its first delivery gets the row as written, a bad item fails alone', async () => {
  const w = cellInstanceWriters()(cell.pool);
  const [a, b] = [randomUUID(), randomUUID()];
  const requestId = `req-${a}`;
  const results = await Promise.allSettled([
    w.write(item(a, 'h1', requestId)),
    w.write(item(a, 'h1', requestId)),
    w.write(item(b, 'h2')),
    w.write({ ...item(randomUUID(), 'h3'), instance: { ...item(randomUUID(), 'h3').instance, projectId: '' } }),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
  const [first, again, other] = results.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
  expect([first?.created, again?.created, other?.created]).toEqual([true, false, true]);
  expect(again?.instance.uuid).toBe(a);
  expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'cell_db.instance.invalid' });
  // the duplicate made the batch's statement fail: one fallback, then each alone
  expect(w.stats).toMatchObject({ fallbacks: 1, statements: 4 });
  expect((await listInstanceActions(cell.pool, a)).map((x) => x.events.length)).toEqual([1]);
});
