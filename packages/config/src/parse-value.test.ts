import { parseValue } from './parse-value';
import type { OptionSpec } from './schema';

const base = { env: 'X', help: 'h' } as const;
const specs = {
  string: { ...base, type: 'string' },
  int: { ...base, type: 'int', min: 1, max: 100 },
  float: { ...base, type: 'float', min: 0 },
  bool: { ...base, type: 'bool' },
  url: { ...base, type: 'url', protocols: ['postgres:', 'postgresql:'] },
  enum: { ...base, type: 'enum', values: ['a', 'b'] },
  list: { ...base, type: 'list' },
  duration: { ...base, type: 'duration', max: '1h' },
} satisfies Record<string, OptionSpec>;

// [type, raw input (text as from env/argv, or a JSON value as from the file), expected value]
const good: [keyof typeof specs, unknown, unknown][] = [
  ['string', 'hello', 'hello'],
  ['string', '', ''],
  ['int', '42', 42],
  ['int', ' +7 ', 7],
  ['int', 100, 100],
  ['float', '1.5', 1.5],
  ['float', '2e3', 2000],
  ['float', 0.25, 0.25],
  ['bool', 'true', true],
  ['bool', 'YES', true],
  ['bool', '1', true],
  ['bool', 'on', true],
  ['bool', 'false', false],
  ['bool', 'No', false],
  ['bool', '0', false],
  ['bool', false, false],
  ['url', 'postgres://u:p@h:5432/db', 'postgres://u:p@h:5432/db'],
  ['url', 'postgresql://h/db', 'postgresql://h/db'],
  ['enum', 'b', 'b'],
  ['list', 'a, b,,c ', ['a', 'b', 'c']],
  ['list', '', []],
  ['list', ['x', 'y'], ['x', 'y']],
  ['duration', '30s', 30_000],
  ['duration', '250ms', 250],
  ['duration', '1m30s', 90_000],
  ['duration', '1.5s', 1500],
  ['duration', '0', 0],
  ['duration', '1h', 3_600_000],
];

const bad: [keyof typeof specs, unknown, string][] = [
  ['string', 5, 'is not a string'],
  ['int', '4.2', 'is not an integer'],
  ['int', 'abc', 'is not an integer'],
  ['int', '', 'is not an integer'],
  ['int', '0', 'below the minimum 1'],
  ['int', '101', 'above the maximum 100'],
  ['int', '99999999999999999999', 'is not an integer'],
  ['float', 'NaN', 'is not a number'],
  ['float', '1.2.3', 'is not a number'],
  ['float', '-1', 'below the minimum 0'],
  ['bool', 'maybe', 'is not a boolean'],
  ['bool', 1, 'is not a boolean'],
  ['url', 'not a url', 'is not a valid URL'],
  ['url', 'mysql://h/db', 'is not one of postgres:, postgresql:'],
  ['enum', 'c', 'is not one of a, b'],
  ['enum', 'A', 'is not one of a, b'],
  ['list', [1, 2], 'is not a list of strings'],
  ['list', 3, 'is not a list'],
  ['duration', '30', 'is not a duration'],
  ['duration', '5 minutes', 'is not a duration'],
  ['duration', 30, 'is not a duration'],
  ['duration', '2h', 'above the maximum'],
];

describe('parseValue', () => {
  test.each(good)('%s accepts %j', (type, raw, expected) => {
    expect(parseValue(specs[type], raw)).toEqual({ ok: true, value: expected });
  });

  test.each(bad)('%s refuses %j', (type, raw, reason) => {
    const parsed = parseValue(specs[type], raw);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toContain(reason);
  });

  test('an unknown type is a reason, not an exception', () => {
    const parsed = parseValue({ ...base, type: 'integer' } as unknown as OptionSpec, '1');
    expect(parsed).toEqual({ ok: false, reason: 'unknown option type "integer"' });
  });
});
