import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config-error';
import { loadConfig } from './load-config';
import { defineConfig, type ConfigSchema } from './schema';

const schema = defineConfig({
  dbUrl: { type: 'url', env: 'T_DB_URL', required: true, protocols: ['postgres:'], help: 'database' },
  port: { type: 'int', env: 'T_PORT', default: 8778, min: 1, max: 65535, help: 'port' },
  ratio: { type: 'float', env: 'T_RATIO', default: 16, help: 'ratio' },
  debug: { type: 'bool', env: 'T_DEBUG', default: false, help: 'debug' },
  logLevel: { type: 'enum', env: 'T_LOG_LEVEL', values: ['debug', 'info', 'warn'], default: 'info', help: 'level' },
  filters: { type: 'list', env: 'T_FILTERS', default: ['ComputeFilter'], help: 'filters' },
  timeout: { type: 'duration', env: 'T_TIMEOUT', default: '30s', help: 'timeout' },
  name: { type: 'string', env: 'T_NAME', help: 'optional name' },
});

const DB = 'postgres://u:p@127.0.0.1/db';
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cellsched-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeJson(name: string, data: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof data === 'string' ? data : JSON.stringify(data));
  return path;
}

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('config.invalid');
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  test('defaults fill every unset option; an optional option without default is undefined', () => {
    const cfg = loadConfig(schema, { env: { T_DB_URL: DB } });
    expect(cfg).toEqual({
      dbUrl: DB,
      port: 8778,
      ratio: 16,
      debug: false,
      logLevel: 'info',
      filters: ['ComputeFilter'],
      timeout: 30_000,
      name: undefined,
    });
    // Type-level checks: these lines only compile if inference is right.
    const port: number = cfg.port;
    const url: string = cfg.dbUrl; // required: never undefined
    const filters: readonly string[] = cfg.filters;
    expect([url, filters.length]).toEqual([DB, 1]);
    const level: 'debug' | 'info' | 'warn' = cfg.logLevel;
    // @ts-expect-error name is optional without default, so it may be undefined
    const name: string = cfg.name;
    expect([port, level, name]).toEqual([8778, 'info', undefined]);
  });

  test('every type is read from env', () => {
    const cfg = loadConfig(schema, {
      env: {
        T_DB_URL: DB,
        T_PORT: '9000',
        T_RATIO: '1.5',
        T_DEBUG: 'yes',
        T_LOG_LEVEL: 'warn',
        T_FILTERS: 'A,B',
        T_TIMEOUT: '2m',
        T_NAME: 'x',
      },
    });
    expect(cfg).toEqual({
      dbUrl: DB,
      port: 9000,
      ratio: 1.5,
      debug: true,
      logLevel: 'warn',
      filters: ['A', 'B'],
      timeout: 120_000,
      name: 'x',
    });
  });

  test('an empty env value counts as unset', () => {
    expect(loadConfig(schema, { env: { T_DB_URL: DB, T_PORT: '' } }).port).toBe(8778);
  });

  test('the result is deep-frozen', () => {
    const cfg = loadConfig(schema, { env: { T_DB_URL: DB } });
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(Object.isFrozen(cfg.filters)).toBe(true);
    expect(() => {
      (cfg as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (cfg.filters as string[]).push('x');
    }).toThrow(TypeError);
  });

  test('every problem is listed in one error', () => {
    const problems = problemsOf(() =>
      loadConfig(schema, {
        env: {
          T_PORT: 'eighty',
          T_RATIO: 'x',
          T_DEBUG: 'maybe',
          T_LOG_LEVEL: 'trace',
          T_TIMEOUT: '30',
        },
      }),
    );
    expect(problems).toEqual([
      'dbUrl: required, set env T_DB_URL',
      'port (env T_PORT): "eighty" is not an integer',
      'ratio (env T_RATIO): "x" is not a number',
      'debug (env T_DEBUG): "maybe" is not a boolean (true/false, 1/0, yes/no, on/off)',
      'logLevel (env T_LOG_LEVEL): "trace" is not one of debug, info, warn',
      'timeout (env T_TIMEOUT): "30" is not a duration (e.g. "30s", "500ms", "1m30s")',
    ]);
  });

  test('schema mistakes are listed together, before any value is read', () => {
    const broken = {
      a: { type: 'integer', env: 'T_A', help: 'a' },
      b: { type: 'int', env: 'lower', help: '' },
      c: { type: 'enum', env: 'T_C', values: ['x'], default: 'y', help: 'c' },
      d: { type: 'int', env: 'T_C', required: true, default: 1, help: 'd' },
      e: { type: 'int', env: 'T_E', min: 5, max: 1, help: 'e' },
      f: { type: 'duration', env: 'T_F', max: 'soon', help: 'f' },
    } as unknown as ConfigSchema;
    expect(problemsOf(() => loadConfig(broken, { env: {} }))).toEqual([
      'option a: unknown type "integer" (known: string, int, float, bool, url, enum, list, duration)',
      'option b: env "lower" must be UPPER_SNAKE_CASE',
      'option b: help text is missing',
      'option c: default "y" is not one of x',
      'option d: a required option cannot have a default',
      'options c and d share env T_C',
      'option e: min is above max',
      'option f: max "soon" is not a valid bound',
    ]);
  });

  test('file values apply, env wins over file, argv wins over env', () => {
    const file = writeJson('prec.json', { dbUrl: DB, port: 1000, ratio: 2, debug: true, filters: ['F'], timeout: '5s' });
    const fromFile = loadConfig(schema, { env: {}, file });
    expect(fromFile).toMatchObject({ port: 1000, ratio: 2, debug: true, filters: ['F'], timeout: 5000 });
    const envWins = loadConfig(schema, { env: { T_PORT: '2000' }, file });
    expect(envWins).toMatchObject({ port: 2000, ratio: 2 });
    const argvWins = loadConfig(schema, { env: { T_PORT: '2000' }, file, argv: ['--port=3000', '--no-debug', '--log-level', 'debug'] });
    expect(argvWins).toMatchObject({ port: 3000, debug: false, logLevel: 'debug', ratio: 2 });
  });

  test('the file path comes from CELLSCHED_CONFIG_FILE unless given; file: false reads none', () => {
    const file = writeJson('byenv.json', { dbUrl: DB, port: 4000 });
    expect(loadConfig(schema, { env: { CELLSCHED_CONFIG_FILE: file } }).port).toBe(4000);
    expect(problemsOf(() => loadConfig(schema, { env: { CELLSCHED_CONFIG_FILE: file }, file: false }))).toEqual([
      'dbUrl: required, set env T_DB_URL',
    ]);
  });

  test('file problems: bad values, unknown keys and unreadable files are listed with their source', () => {
    const file = writeJson('bad.json', { dbUrl: 'mysql://h/db', port: 'x', colour: 'red' });
    const problems = problemsOf(() => loadConfig(schema, { env: {}, file }));
    expect(problems).toEqual([
      `config file ${file}: unknown option "colour"`,
      `dbUrl (file ${file}): URL scheme "mysql:" is not one of postgres:`,
      `port (file ${file}): "x" is not an integer`,
    ]);
    expect(
      loadConfig(schema, { env: { T_DB_URL: DB }, file: writeJson('shared.json', { colour: 'red' }), allowUnknownFileKeys: true }).port,
    ).toBe(8778);
    expect(problemsOf(() => loadConfig(schema, { env: { T_DB_URL: DB }, file: writeJson('notjson.json', '{oops') }))[0]).toMatch(
      /^config file .*notjson\.json: /,
    );
    expect(problemsOf(() => loadConfig(schema, { env: { T_DB_URL: DB }, file: join(dir, 'missing.json') }))[0]).toContain('ENOENT');
    expect(problemsOf(() => loadConfig(schema, { env: { T_DB_URL: DB }, file: writeJson('array.json', [1]) }))).toEqual([
      `config file ${join(dir, 'array.json')}: must hold a JSON object keyed by option name`,
    ]);
  });

  test('argv problems: unknown flags, missing values, --no- on a non-boolean', () => {
    expect(problemsOf(() => loadConfig(schema, { env: { T_DB_URL: DB }, argv: ['--colour=red', '--no-port', '--port'] }))).toEqual([
      'argument "--colour=red": unknown option',
      'argument "--no-port": --no- applies to boolean options only',
      'argument --port: missing value',
    ]);
  });
});
