import { loadConfig } from './load-config';
import { renderHelp, redactConfig, redactUrl } from './render-help';
import { wantsHelp } from './sources';
import { defineConfig } from './schema';
import { testInfra } from './test-infra';

describe('renderHelp', () => {
  const schema = defineConfig({
    dbUrl: { type: 'url', env: 'X_DB_URL', required: true, help: 'Placement database.' },
    adminUrl: { type: 'url', env: 'X_ADMIN_URL', default: 'postgres://u:secret@h/db', help: 'Admin URL.' },
    token: { type: 'string', env: 'X_TOKEN', default: 'hunter2', secret: true, help: 'Token.' },
    level: { type: 'enum', env: 'X_LEVEL', values: ['info', 'debug'], default: 'info', help: 'Log level.' },
    timeout: { type: 'duration', env: 'X_TIMEOUT', default: '90s', help: 'Timeout.' },
    verbose: { type: 'bool', env: 'X_VERBOSE', help: 'Verbose.' },
  });

  test('lists flag, env, default or required, and help; hides secrets and URL passwords', () => {
    const help = renderHelp(schema);
    expect(help).toContain('  --db-url <url>\n      env X_DB_URL; required\n      Placement database.');
    expect(help).toContain('--admin-url <url>\n      env X_ADMIN_URL; default: postgres://u:***@h/db');
    expect(help).toContain('--token <string>\n      env X_TOKEN; default: (hidden)');
    expect(help).toContain('--level <info|debug>\n      env X_LEVEL; default: info');
    expect(help).toContain('--timeout <duration>\n      env X_TIMEOUT; default: 1m30s');
    expect(help).toContain('--verbose\n      env X_VERBOSE; optional');
    expect(help).not.toMatch(/secret|hunter2/);
  });

  test('redactConfig masks secrets and URL passwords for logging', () => {
    const cfg = loadConfig(schema, { env: { X_DB_URL: 'postgres://p:pw@h/db' }, file: false });
    expect(redactConfig(schema, cfg)).toEqual({
      dbUrl: 'postgres://p:***@h/db',
      adminUrl: 'postgres://u:***@h/db',
      token: '***',
      level: 'info',
      timeout: 90_000,
      verbose: undefined,
    });
  });

  test('wantsHelp spots --help and -h only', () => {
    expect([wantsHelp(['--port=1', '--help']), wantsHelp(['-h']), wantsHelp(['--helpful=1']), wantsHelp([])]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  test('redactUrl leaves URLs without password and non-URLs alone', () => {
    expect(redactUrl('amqp://h/vhost')).toBe('amqp://h/vhost');
    expect(redactUrl('not a url')).toBe('not a url');
  });
});

describe('testInfra', () => {
  test('defaults to the local servers and honours the env vars', () => {
    expect(testInfra({})).toEqual({
      pgAdminUrl: 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres',
      amqpUrl: 'amqp://cellsched:cellsched@127.0.0.1:5672/',
    });
    expect(testInfra({ CELLSCHED_TEST_PG_URL: 'postgres://a@b/c', CELLSCHED_TEST_AMQP_URL: 'amqp://x@y/' })).toEqual({
      pgAdminUrl: 'postgres://a@b/c',
      amqpUrl: 'amqp://x@y/',
    });
    expect(() => testInfra({ CELLSCHED_TEST_PG_URL: 'amqp://x@y/', CELLSCHED_CONFIG_FILE: '/nonexistent' })).toThrow(
      'CELLSCHED_TEST_PG_URL',
    );
  });
});
