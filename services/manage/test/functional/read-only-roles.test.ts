// `api_db sync` / `db sync --read-only-role READER=ROLE`: a cell created at run time is made
// readable by the scheduler's and the api's read-only roles by whoever syncs it (the owner),
// with SELECT on exactly what each reads. Child processes against real databases and roles.
import { randomBytes } from 'node:crypto';
import { testInfra } from '@cellsched/config';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { Client } from 'pg';
import { buildManage, manage } from './cli-support';

const suffix = randomBytes(4).toString('hex');
const SCHED = `mng_ro_sched_${suffix}`;
const API = `mng_ro_api_${suffix}`;
let api: TestDatabase;
let cell0: TestDatabase;
let cell1: TestDatabase;
const run = (...args: string[]) => manage(['--api-db-url', api.url, ...args]);

async function asAdmin(sql: string): Promise<void> {
  const c = new Client({ connectionString: testInfra().pgAdminUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Each statement run as `role` on `db`: 'ok' or the error message; a refused connection is `connect: <message>`. */
async function outcomes(role: string, db: TestDatabase, statements: readonly string[]): Promise<Record<string, string> | string> {
  const u = new URL(db.url);
  u.username = role;
  u.password = `${role}-pw`;
  const c = new Client({ connectionString: u.toString() });
  try {
    await c.connect();
  } catch (err) {
    return `connect: ${(err as Error).message}`;
  }
  const out: Record<string, string> = {};
  try {
    for (const sql of statements)
      out[sql] = await c.query(sql).then(
        () => 'ok',
        (e: Error) => e.message,
      );
  } finally {
    await c.end();
  }
  return out;
}

beforeAll(async () => {
  buildManage();
  const make = (prefix: string) => createTestDatabase({ prefix, poolMax: 2 });
  [api, cell0, cell1] = await Promise.all([make('mng_ro_api'), make('mng_ro_c0'), make('mng_ro_c1')]);
  for (const role of [SCHED, API]) await asAdmin(`CREATE ROLE ${role} LOGIN PASSWORD '${role}-pw'`);
  // as the launcher and compose provision them: nobody connects to a database without a grant
  for (const d of [api, cell0, cell1]) await asAdmin(`REVOKE CONNECT ON DATABASE ${d.name} FROM PUBLIC`);
  expect((await run('api_db', 'sync')).code).toBe(0);
  expect((await run('cell_v2', 'map_cell0', '--database_connection', cell0.url)).code).toBe(0);
  expect(
    (
      await run(
        'cell_v2',
        'create_cell',
        '--name',
        'cell1',
        '--transport-url',
        'amqp://c1:c1-pw@127.0.0.1:5672/c1',
        '--database_connection',
        cell1.url,
      )
    ).code,
  ).toBe(0);
}, 120_000);

afterAll(async () => {
  for (const d of [api, cell0, cell1] as (TestDatabase | undefined)[]) await d?.drop();
  for (const role of [SCHED, API]) await asAdmin(`DROP ROLE IF EXISTS ${role}`);
});

const denied = expect.stringMatching(/^permission denied/);
const readsAll = (tables: string[]): string => `SELECT ${tables.map((x) => `(SELECT count(*) FROM ${x})`).join(' + ')}`;

test('db sync --read-only-role: each role reads exactly its tables of every cell, the scheduler not cell0; idempotent', async () => {
  expect(await outcomes(SCHED, cell1, ['SELECT 1'])).toMatch(/^connect: permission denied/);
  for (let i = 0; i < 2; i++) {
    const r = await run('db', 'sync', '--read-only-role', `scheduler=${SCHED}`, '--read-only-role', `api=${API}`);
    expect([r.code, r.stderr]).toEqual([0, '']);
  }
  expect(
    await outcomes(SCHED, cell1, [
      readsAll(['services', 'compute_nodes']),
      'SELECT 1 FROM instances',
      'INSERT INTO services DEFAULT VALUES',
      'SET default_transaction_read_only = off; UPDATE compute_nodes SET updated_at = now()',
    ]),
  ).toEqual({
    [readsAll(['services', 'compute_nodes'])]: 'ok',
    'SELECT 1 FROM instances': denied,
    'INSERT INTO services DEFAULT VALUES': denied,
    'SET default_transaction_read_only = off; UPDATE compute_nodes SET updated_at = now()': denied,
  });
  expect(await outcomes(SCHED, cell0, ['SELECT 1'])).toMatch(/^connect: permission denied/);
  // migrations: os-services DELETE refuses a host with in-progress migrations; compute_processes is the cell conductor's alone
  const apiReads = readsAll([
    'instances',
    'instance_faults',
    'instance_actions',
    'instance_actions_events',
    'services',
    'compute_nodes',
    'migrations',
  ]);
  for (const d of [cell0, cell1]) {
    expect(await outcomes(API, d, [apiReads, 'SELECT 1 FROM compute_processes', 'DELETE FROM instances'])).toEqual({
      [apiReads]: 'ok',
      'SELECT 1 FROM compute_processes': denied,
      'DELETE FROM instances': denied,
    });
  }
});

test("api_db sync --read-only-role scheduler: where the cells are (no credentials), never cell_mappings' URLs", async () => {
  expect((await run('api_db', 'sync', '--read-only-role', `scheduler=${SCHED}`)).code).toBe(0);
  const got = await outcomes(SCHED, api, [
    'SELECT database_connection FROM cell_mappings',
    'SELECT 1 FROM build_requests',
    'INSERT INTO aggregates DEFAULT VALUES',
    readsAll([
      'aggregates',
      'aggregate_hosts',
      'aggregate_metadata',
      'instance_groups',
      'instance_group_policy',
      'instance_group_member',
      'cell_mapping_endpoints',
      'host_mappings',
    ]),
  ]);
  expect(Object.values(got as Record<string, string>)).toEqual([denied, denied, denied, 'ok']);
  const u = new URL(api.url);
  u.username = SCHED;
  u.password = `${SCHED}-pw`;
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  const { rows } = await c.query<{ t: string; d: string }>(
    'SELECT transport_url AS t, database_connection AS d FROM cell_mapping_endpoints ORDER BY name',
  );
  await c.end();
  expect(rows).toEqual([
    { t: 'none:///', d: `${new URL(cell0.url).protocol}//${new URL(cell0.url).host}/${cell0.name}` },
    { t: 'amqp://127.0.0.1:5672/c1', d: `${new URL(cell1.url).protocol}//${new URL(cell1.url).host}/${cell1.name}` },
  ]);
});

test('bad --read-only-role: usage error (2) for an unknown reader or a malformed role, ERROR (1) for a missing role; nothing granted', async () => {
  expect(await run('db', 'sync', '--read-only-role', `placement=${SCHED}`)).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('unknown reader placement (choose from scheduler, api)'),
  });
  expect(await run('api_db', 'sync', '--read-only-role', 'api=x')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('unknown reader api (choose from scheduler)'),
  });
  expect(await run('db', 'sync', '--read-only-role', 'scheduler=Bad;Role')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining("role must be a lowercase PostgreSQL identifier, got 'Bad;Role'"),
  });
  expect(await run('db', 'sync', '--read-only-role', 'scheduler=no_such_role_x')).toMatchObject({
    code: 1,
    stderr: 'ERROR: role "no_such_role_x" does not exist\n',
  });
});
