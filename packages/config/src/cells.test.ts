import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CELL0_UUID, loadCellTopology, parseCellTopology } from './cells';
import { ConfigError } from './config-error';

const CELL1 = 'c3a0b3a2-6f1e-4a55-9c57-1e0d2f3b4a51';
const CELL2 = '5b1f0c8e-2d3a-4e6f-8a9b-0c1d2e3f4a5b';
const valid = {
  apiDbUrl: 'postgres://api:pw@127.0.0.1:5432/nova_api',
  apiTransportUrl: 'amqp://api:pw@127.0.0.1:5672/nova_api',
  cell0: { dbUrl: 'postgres://c0:pw@127.0.0.1:5432/nova_cell0' },
  cells: [
    { uuid: CELL1.toUpperCase(), name: 'cell1', dbUrl: 'postgres://c1@h/nova_cell1', transportUrl: 'amqp://c1@h/cell1' },
    { uuid: CELL2, name: 'cell2', dbUrl: 'postgresql://c2@h/nova_cell2', transportUrl: 'amqps://c2@h/cell2' },
  ],
};

function problemsOf(input: unknown): readonly string[] {
  try { parseCellTopology(input); } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('config.cells.invalid');
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('parseCellTopology', () => {
  test('parses a valid topology, defaults cell0 name/uuid, lowercases uuids, freezes', () => {
    const t = parseCellTopology(JSON.stringify(valid));
    expect(t.cell0).toEqual({ uuid: CELL0_UUID, name: 'cell0', dbUrl: valid.cell0.dbUrl });
    expect(t.cells.map((c) => [c.uuid, c.name])).toEqual([[CELL1, 'cell1'], [CELL2, 'cell2']]);
    expect(t.apiTransportUrl).toBe(valid.apiTransportUrl);
    expect(Object.isFrozen(t.cells[0])).toBe(true);
  });

  const cases: [string, unknown, string[]][] = [
    ['not JSON', '{', ['not JSON: ']],
    ['not an object', '[]', ['must be a JSON object']],
    ['wrong schemes and missing cells', { ...valid, apiDbUrl: 'mysql://h/db', apiTransportUrl: 'http://h', cells: undefined },
      ['topology.apiDbUrl: scheme must be one of postgres:, postgresql:', 'topology.apiTransportUrl: scheme must be one of amqp:, amqps:', 'topology.cells: must be an array']],
    ['cell0 with another uuid', { ...valid, cell0: { uuid: CELL1, dbUrl: valid.cell0.dbUrl } }, [`cell0.uuid: must be ${CELL0_UUID}`]],
    ['a cell using the cell0 uuid, bad uuid, missing fields', { ...valid, cells: [
      { uuid: CELL0_UUID, name: 'x', dbUrl: 'postgres://h/x', transportUrl: 'amqp://h/x' },
      { uuid: 'nope', name: '', dbUrl: 'nope', transportUrl: 5 },
    ] }, [`cells[0].uuid: ${CELL0_UUID} is reserved for cell0`, 'cells[1].name: must be a non-empty string', 'cells[1].uuid: "nope" is not a uuid', 'cells[1].dbUrl: must be a URL', 'cells[1].transportUrl: must be a URL']],
    ['duplicate uuids and names (cell0 name included)', { ...valid, cells: [
      ...valid.cells, { ...valid.cells[1], name: 'cell1', dbUrl: 'postgres://h/z', transportUrl: 'amqp://h/z' }, { uuid: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', name: 'cell0', dbUrl: 'postgres://h/y', transportUrl: 'amqp://h/y' },
    ] }, ['cells[2].name: "cell1" is also used by cells[0]', `cells[2].uuid: ${CELL2} is also used by cells[1]`, 'cells[3].name: "cell0" is also used by cell0']],
    ['shared databases or vhosts, whatever the credentials', { ...valid, cells: [
      { ...valid.cells[0], dbUrl: 'postgres://other:pw@127.0.0.1/nova_cell0' },
      { ...valid.cells[1], transportUrl: 'amqp://x:y@127.0.0.1:5672/nova_api' },
    ] }, ['cells[0].dbUrl: db://127.0.0.1:5432/nova_cell0 is also used by cell0.dbUrl', 'cells[1].transportUrl: bus://127.0.0.1:5672/nova_api is also used by topology.apiTransportUrl']],
  ];

  test.each(cases)('refuses %s, listing every problem', (_label, input, expected) => {
    const problems = problemsOf(input);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((fragment) => expect(problems.some((p) => p.includes(fragment))).toBe(true));
  });
});

describe('loadCellTopology', () => {
  let dir: string;
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'cellsched-cells-')); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('reads inline JSON from CELLSCHED_CELLS or a file from CELLSCHED_CELLS_FILE, not both', () => {
    const path = join(dir, 'cells.json');
    writeFileSync(path, JSON.stringify(valid));
    expect(loadCellTopology({ env: { CELLSCHED_CELLS: JSON.stringify(valid) } }).cells).toHaveLength(2);
    expect(loadCellTopology({ env: { CELLSCHED_CELLS_FILE: path } }).cells).toHaveLength(2);
    expect(loadCellTopology({ env: {}, file: path }).cells).toHaveLength(2);
    expect(() => loadCellTopology({ env: { CELLSCHED_CELLS: '{}', CELLSCHED_CELLS_FILE: path } })).toThrow('not both');
    expect(() => loadCellTopology({ env: {} })).toThrow('no cell topology');
    expect(() => loadCellTopology({ env: {}, file: join(dir, 'missing.json') })).toThrow('cannot read');
  });
});
