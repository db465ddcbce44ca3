import type { CellMapping } from './cell-mappings';
import { CellSet, isQuietReport, type CellOpener, type CellSetReport } from './cell-set';

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';

function cell(uuid: string, n: number, o: Partial<CellMapping> = {}): CellMapping {
  return {
    id: n,
    uuid,
    name: `cell${n}`,
    disabled: false,
    databaseConnection: `postgres://c${n}@db/cell${n}`,
    transportUrl: `amqp://c${n}@mq/cell${n}`,
    ...o,
  };
}

/** Opens "connections" named after the URL; records every open and close; a URL in `down` fails to open. */
class Recorder implements CellOpener<string> {
  readonly log: string[] = [];
  readonly down = new Set<string>();
  async open(m: CellMapping): Promise<string> {
    if (this.down.has(m.databaseConnection)) throw new Error(`cannot reach ${m.databaseConnection}`);
    this.log.push(`open ${m.databaseConnection}`);
    return `conn:${m.databaseConnection}`;
  }
  async close(resource: string): Promise<void> {
    this.log.push(`close ${resource}`);
  }
}

/** A report's lists as uuids. */
const u = (r: CellSetReport): Record<'added' | 'moved' | 'updated' | 'removed', string[]> => ({
  added: r.added.map((m) => m.uuid),
  moved: r.moved.map((m) => m.uuid),
  updated: r.updated.map((m) => m.uuid),
  removed: r.removed.map((m) => m.uuid),
});

const state = (set: CellSet<string>): Record<string, [string, boolean, string]> =>
  Object.fromEntries(set.list().map((c) => [c.mapping.uuid, [c.mapping.name ?? '', c.mapping.disabled, c.resource]]));

test('added, disabled, moved and deleted cells: opened, kept, reopened before the old is closed, closed', async () => {
  const rec = new Recorder();
  const set = new CellSet(rec);
  const r1 = await set.apply([cell(U1, 1), cell(U2, 2)]);
  expect([[...u(r1).added].sort(), isQuietReport(r1)]).toEqual([[U1, U2].sort(), false]);
  expect(isQuietReport(await set.apply([cell(U1, 1), cell(U2, 2)]))).toBe(true);

  const r2 = await set.apply([cell(U1, 1, { disabled: true }), cell(U2, 2)]);
  expect(u(r2).updated).toEqual([U1]);
  expect(state(set)[U1]).toEqual(['cell1', true, 'conn:postgres://c1@db/cell1']);

  rec.log.length = 0;
  const r3 = await set.apply([cell(U1, 1, { disabled: true }), cell(U2, 2, { databaseConnection: 'postgres://c2@db2/cell2' })]);
  expect(u(r3).moved).toEqual([U2]);
  expect(rec.log).toEqual(['open postgres://c2@db2/cell2', 'close conn:postgres://c2@db/cell2']);

  rec.log.length = 0;
  const r4 = await set.apply([cell(U2, 2, { databaseConnection: 'postgres://c2@db2/cell2' })]);
  expect(u(r4).removed).toEqual([U1]);
  expect(rec.log).toEqual(['close conn:postgres://c1@db/cell1']);
  expect(Object.keys(state(set))).toEqual([U2]);
});

test('a cell that cannot be opened is reported and retried next time; the others are opened meanwhile', async () => {
  const rec = new Recorder();
  rec.down.add('postgres://c1@db/cell1');
  const set = new CellSet(rec);
  const r1 = await set.apply([cell(U1, 1), cell(U2, 2)]);
  expect(u(r1).added).toEqual([U2]);
  expect(r1.failed.map((f) => [f.mapping.uuid, String(f.error)])).toEqual([[U1, 'Error: cannot reach postgres://c1@db/cell1']]);
  expect(set.get(U1)).toBeUndefined();
  rec.down.clear();
  expect(u(await set.apply([cell(U1, 1), cell(U2, 2)])).added).toEqual([U1]);
  expect(set.get(U1)?.resource).toBe('conn:postgres://c1@db/cell1');
});

test('a move whose new URL cannot be opened keeps the cell on its old connections', async () => {
  const rec = new Recorder();
  const set = new CellSet(rec);
  await set.apply([cell(U1, 1)]);
  rec.down.add('postgres://c1@gone/cell1');
  const r = await set.apply([cell(U1, 1, { databaseConnection: 'postgres://c1@gone/cell1' })]);
  expect([u(r).moved, r.failed.length]).toEqual([[], 1]);
  expect(set.get(U1)?.resource).toBe('conn:postgres://c1@db/cell1');
  expect(set.get(U1)?.mapping.databaseConnection).toBe('postgres://c1@db/cell1');
});

test('a close that throws still drops the cell and is reported; concurrent applies run one after the other', async () => {
  const rec = new Recorder();
  rec.close = async () => {
    throw new Error('close failed');
  };
  const set = new CellSet(rec);
  const [a, b] = await Promise.all([set.apply([cell(U1, 1)]), set.apply([])]);
  expect([u(a).added, u(b).removed, b.failed.map((f) => String(f.error))]).toEqual([[U1], [U1], ['Error: close failed']]);
  expect(set.list()).toEqual([]);
});

test('close() closes every open cell', async () => {
  const rec = new Recorder();
  const set = new CellSet(rec);
  await set.apply([cell(U1, 1), cell(U2, 2)]);
  rec.log.length = 0;
  await set.close();
  expect(rec.log.sort()).toEqual(['close conn:postgres://c1@db/cell1', 'close conn:postgres://c2@db/cell2']);
  expect(set.list()).toEqual([]);
});
