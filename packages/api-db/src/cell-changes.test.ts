import { CELL0_UUID } from '@cellsched/config';
import { planCellChanges, refusedCells } from './cell-changes';
import type { CellMapping } from './cell-mappings';

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';
const U3 = '33333333-3333-4333-8333-333333333333';

function cell(uuid: string, n: number, o: Partial<CellMapping> = {}): CellMapping {
  return {
    id: n,
    uuid,
    name: `cell${n}`,
    disabled: false,
    databaseConnection: `postgres://c${n}:pw@db:5432/cell${n}`,
    transportUrl: `amqp://c${n}:pw@mq:5672/cell${n}`,
    ...o,
  };
}
const cell0 = (o: Partial<CellMapping> = {}): CellMapping => ({
  id: 9,
  uuid: CELL0_UUID,
  name: 'cell0',
  disabled: false,
  databaseConnection: 'postgres://c0@db/cell0',
  transportUrl: 'none:///',
  ...o,
});
const byUuid = (...cs: CellMapping[]): Map<string, CellMapping> => new Map(cs.map((c) => [c.uuid, c]));
const uuids = (cs: readonly CellMapping[]): string[] => cs.map((c) => c.uuid);

describe('planCellChanges', () => {
  test.each([
    ['nothing open: every mapping is added', [], [cell0(), cell(U1, 1)], { added: [CELL0_UUID, U1] }],
    ['same mappings: nothing to do', [cell0(), cell(U1, 1)], [cell0(), cell(U1, 1)], {}],
    ['a new cell is added', [cell(U1, 1)], [cell(U1, 1), cell(U2, 2)], { added: [U2] }],
    ['a deleted cell is removed', [cell(U1, 1), cell(U2, 2)], [cell(U1, 1)], { removed: [U2] }],
    ['a disabled cell is updated, not reopened', [cell(U1, 1)], [cell(U1, 1, { disabled: true })], { updated: [U1] }],
    ['a renamed cell is updated', [cell(U1, 1)], [cell(U1, 1, { name: 'east' })], { updated: [U1] }],
    [
      'a new database URL moves the cell',
      [cell(U1, 1)],
      [cell(U1, 1, { databaseConnection: 'postgres://c1:new@db2:5432/cell1' })],
      { moved: [U1] },
    ],
    ['a new transport URL moves the cell', [cell(U1, 1)], [cell(U1, 1, { transportUrl: 'amqp://c1:new@mq:5672/cell1' })], { moved: [U1] }],
    [
      'new credentials alone move the cell (reconnect as the new user)',
      [cell(U1, 1)],
      [cell(U1, 1, { databaseConnection: 'postgres://c1:rotated@db:5432/cell1' })],
      { moved: [U1] },
    ],
    ['cell0 needs no bus', [], [cell0()], { added: [CELL0_UUID] }],
  ])('%s', (_what, current, next, want) => {
    const plan = planCellChanges(byUuid(...current), next);
    expect({
      added: uuids(plan.added),
      moved: uuids(plan.moved),
      updated: uuids(plan.updated),
      removed: uuids(plan.removed),
      refused: plan.refused.length,
    }).toEqual({ added: [], moved: [], updated: [], removed: [], refused: 0, ...want });
  });

  test('a refused mapping changes nothing: an open cell keeps its good mapping, a new one is not opened', () => {
    const bad = cell(U1, 1, { databaseConnection: 'mysql://c1@db/cell1' });
    const plan = planCellChanges(byUuid(cell(U1, 1)), [bad, cell(U3, 3, { transportUrl: 'http://mq/x' })]);
    expect([plan.added, plan.moved, plan.updated, plan.removed].map(uuids)).toEqual([[], [], [], []]);
    expect(plan.refused.map((r) => [r.mapping.uuid, r.reason])).toEqual([
      [U1, 'database_connection is not a postgres URL'],
      [U3, 'transport_url is not an amqp URL'],
    ]);
  });
});

describe('refusedCells', () => {
  test('two cells on one database (other credentials, default port spelled out) are both refused; the others go on', () => {
    const a = cell(U1, 1);
    const b = cell(U2, 2, { databaseConnection: 'postgresql://someone:else@DB/cell1' });
    const refused = refusedCells([cell0(), a, b, cell(U3, 3)]);
    expect(refused.map((r) => r.mapping.uuid).sort()).toEqual([U1, U2].sort());
    expect(refused[0]?.reason).toMatch(/db:\/\/db:5432\/cell1 is used by cells .* every cell needs its own database and vhost/);
  });

  test("two cells on one vhost are refused; a cell on cell0's database too", () => {
    expect(refusedCells([cell(U1, 1), cell(U2, 2, { transportUrl: 'amqp://x:y@mq/cell1' })]).length).toBe(2);
    expect(
      refusedCells([cell0(), cell(U1, 1, { databaseConnection: 'postgres://c1@db/cell0' })])
        .map((r) => r.mapping.uuid)
        .sort(),
    ).toEqual([CELL0_UUID, U1].sort());
  });
});
