import { randomUUID } from 'node:crypto';
import { getCellMapping, listHostMappings } from '@cellsched/api-db';
import { listComputeNodes, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { buildManage, manage } from './cli-support';

const CELL_MIGRATIONS =
  '001_initial, 002_instances_created_at_uuid_idx, 003_instances_trace_parent, 004_retired_hosts, 005_instances_created_at_ms, 006_instance_moves, 007_migration_instance_types, 008_migrations_created_at_ms, 009_services_heartbeat_hot, 010_compute_nodes_cpu_info, 011_compute_nodes_stats_hot';
const UUID_LINE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n$/;
let api: TestDatabase;
let cell0: TestDatabase;
let cell1: TestDatabase;
let cell2: TestDatabase;
let cell1Uuid = '';
const cell2Uuid = randomUUID();
const run = (...args: string[]) => manage(['--api-db-url', api.url, ...args]);
const transport = (vhost: string) => `amqp://${vhost}:s3cret@127.0.0.1:5672/${vhost}`;

beforeAll(async () => {
  buildManage();
  const make = (prefix: string) => createTestDatabase({ prefix, poolMax: 2 });
  [api, cell0, cell1, cell2] = await Promise.all([make('mng_api'), make('mng_c0'), make('mng_c1'), make('mng_c2')]);
}, 120_000);
afterAll(async () => {
  for (const d of [api, cell0, cell1, cell2] as (TestDatabase | undefined)[]) await d?.drop();
});

async function addCompute(db: TestDatabase, host: string, nodes = 1): Promise<void> {
  const { service } = await upsertService(db.pool, { host, binary: 'nova-compute', topic: 'compute' });
  for (let i = 0; i < nodes; i++) {
    await upsertComputeNode(db.pool, {
      uuid: randomUUID(),
      serviceId: service.id,
      host,
      hypervisorHostname: i === 0 ? host : `${host}-${i}`,
      vcpus: 8,
      memoryMb: 8192,
      localGb: 100,
    });
  }
}

describe('cellsched-manage cell_v2 (child processes against real databases)', () => {
  it('api_db sync applies then has nothing to do', async () => {
    expect(await run('api_db', 'sync')).toEqual({
      code: 0,
      stdout:
        'Applied 001_initial\nApplied 002_build_request_trace\nApplied 003_cell_mapping_endpoints\nApplied 004_server_task_intents\nApplied 005_catalogue_notify\n',
      stderr: '',
    });
    expect(await run('api_db', 'sync')).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await run('api_db', 'version')).stdout).toBe('5\n');
  });

  it('map_cell0 is idempotent', async () => {
    expect(await run('cell_v2', 'map_cell0', '--database_connection', cell0.url)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await run('cell_v2', 'map_cell0', '--database_connection', cell0.url)).toEqual({
      code: 0,
      stdout: 'Cell0 is already setup\n',
      stderr: '',
    });
    expect((await run('cell_v2', 'map_cell0')).code).toBe(1);
  });

  it('create_cell prints the uuid with --verbose, refuses duplicates (2) and bad input (1)', async () => {
    const r = await run(
      'cell_v2',
      'create_cell',
      '--name',
      'cell1',
      '--transport-url',
      transport('cell1'),
      '--database_connection',
      cell1.url,
      '--verbose',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(UUID_LINE);
    cell1Uuid = r.stdout.trim();
    expect((await getCellMapping(api.pool, cell1Uuid))?.name).toBe('cell1');
    const dup = await run(
      'cell_v2',
      'create_cell',
      '--name',
      'again',
      '--transport-url',
      transport('cell1'),
      '--database_connection',
      cell1.url,
    );
    expect(dup).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Cell with the specified transport_url and database_connection combination already exists\n',
    });
    const quiet = await run(
      'cell_v2',
      'create_cell',
      '--name',
      'cell2',
      '--transport_url',
      transport('cell2'),
      '--database_connection',
      cell2.url,
      '--uuid',
      cell2Uuid,
    );
    expect(quiet).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await run('cell_v2', 'create_cell', '--name', 'x', '--database_connection', cell2.url)).stderr).toMatch(
      /^Must specify --transport-url/,
    );
    const bad = await run('cell_v2', 'create_cell', '--transport-url', 'http://x/', '--database_connection', 'mysql://u:pw@h/db');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      '--transport-url must use one of amqp:, amqps:, got http:\n--database_connection must use one of postgres:, postgresql:, got mysql:\n',
    );
  });

  it('db sync migrates every mapped cell, cell0 included, idempotently', async () => {
    const r = await run('db', 'sync');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(
      [
        `cell 'cell0' (00000000-0000-0000-0000-000000000000): applied ${CELL_MIGRATIONS}`,
        `cell 'cell1' (${cell1Uuid}): applied ${CELL_MIGRATIONS}`,
        `cell 'cell2' (${cell2Uuid}): applied ${CELL_MIGRATIONS}`,
      ].sort(),
    );
    expect((await run('db', 'sync')).stdout).toMatch(/^(.*: up to date\n){3}$/);
    expect((await run('db', 'sync', '--database_connection', cell1.url)).stdout).toBe('database: up to date\n');
    expect((await manage(['db', 'version', '--database_connection', cell1.url])).stdout).toBe('11\n');
  });

  it('list_cells masks passwords unless --verbose', async () => {
    const masked = await run('cell_v2', 'list_cells');
    expect(masked.code).toBe(0);
    expect(masked.stdout).toContain('amqp://cell1:****@127.0.0.1:5672/cell1');
    expect(masked.stdout).not.toContain('s3cret');
    expect(masked.stdout).not.toContain(':cellsched@');
    const lines = masked.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^\|\s+Name\s+\|\s+UUID\s+\|\s+Transport URL\s+\|\s+Database Connection\s+\|\s+Disabled\s+\|$/);
    expect(lines.slice(3, 6).map((l) => l.split('|')[1]?.trim())).toEqual(['cell0', 'cell1', 'cell2']);
    expect((await run('cell_v2', 'list_cells', '--verbose')).stdout).toContain(transport('cell1'));
  });

  it('discover_hosts maps exactly the new hosts; a second run maps nothing', async () => {
    await addCompute(cell1, 'c1-h1', 2);
    await addCompute(cell1, 'c1-h2');
    await addCompute(cell2, 'c2-h1');
    const r = await run('cell_v2', 'discover_hosts', '--verbose');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Found 3 cell mappings.\nSkipping cell0 since it does not contain hosts.\n');
    expect(r.stdout).toContain(`Found 3 unmapped computes in cell: ${cell1Uuid}`);
    expect(r.stdout.match(/^Creating host mapping for compute host '[^']+': /gm)).toHaveLength(3);
    expect((await listHostMappings(api.pool)).map((h) => [h.host, h.cellUuid]).sort()).toEqual(
      [
        ['c1-h1', cell1Uuid],
        ['c1-h2', cell1Uuid],
        ['c2-h1', cell2Uuid],
      ].sort(),
    );
    expect((await listComputeNodes(cell1.pool)).map((n) => n.mapped)).toEqual([1, 1, 1]);

    const again = await run('cell_v2', 'discover_hosts', '--verbose', '--strict');
    expect(again.code).toBe(1);
    expect(again.stdout).not.toContain('Creating host mapping');
    expect((await listHostMappings(api.pool)).length).toBe(3);

    await addCompute(cell1, 'c1-h3');
    const one = await run('cell_v2', 'discover_hosts', '--cell_uuid', cell1Uuid, '--strict', '--verbose');
    expect(one.code).toBe(0);
    expect(one.stdout.match(/^Creating host mapping for compute host '([^']+)'/gm)).toEqual([
      "Creating host mapping for compute host 'c1-h3'",
    ]);
    expect(one.stdout).not.toContain('Found 3 cell mappings');
  });

  it('discover_hosts --by-service maps hosts with a service but no compute node yet', async () => {
    await upsertService(cell2.pool, { host: 'c2-svc', binary: 'nova-compute' });
    expect((await run('cell_v2', 'discover_hosts')).stdout).toBe('');
    expect((await listHostMappings(api.pool)).map((h) => h.host)).not.toContain('c2-svc');
    expect((await run('cell_v2', 'discover_hosts', '--by-service', '--strict')).code).toBe(0);
    expect((await listHostMappings(api.pool, { cellUuid: cell2Uuid })).map((h) => h.host)).toEqual(['c2-h1', 'c2-svc']);
    expect((await run('cell_v2', 'discover_hosts', '--by-service', '--strict')).code).toBe(1);
  });

  it('list_hosts shows the mappings, of all cells or one', async () => {
    const all = await run('cell_v2', 'list_hosts');
    expect(all.code).toBe(0);
    const rows = all.stdout
      .trim()
      .split('\n')
      .slice(3, -1)
      .map((l) =>
        l
          .split('|')
          .slice(1, 4)
          .map((c) => c.trim()),
      );
    expect(rows).toEqual([
      ['cell1', cell1Uuid, 'c1-h1'],
      ['cell1', cell1Uuid, 'c1-h2'],
      ['cell1', cell1Uuid, 'c1-h3'],
      ['cell2', cell2Uuid, 'c2-h1'],
      ['cell2', cell2Uuid, 'c2-svc'],
    ]);
    expect((await run('cell_v2', 'list_hosts', '--cell_uuid', cell2Uuid)).stdout).not.toContain('c1-h1');
    const missing = randomUUID();
    expect(await run('cell_v2', 'list_hosts', '--cell_uuid', missing)).toEqual({
      code: 1,
      stdout: '',
      stderr: `Cell with uuid ${missing} was not found.\n`,
    });
    expect((await run('cell_v2', 'discover_hosts', '--cell_uuid', missing)).code).toBe(1);
  });

  it('usage errors exit 2; a missing API database URL is explained', async () => {
    expect((await run('cell_v2', 'list_cells', '--bogus')).stderr).toBe('cellsched-manage: error: unrecognized arguments: --bogus\n');
    expect((await run('cell_v2', 'nope')).code).toBe(2);
    expect((await run('cell_v2', 'list_cells', 'extra')).code).toBe(2);
    const noUrl = await manage(['cell_v2', 'list_cells']);
    expect(noUrl).toEqual({
      code: 2,
      stdout: '',
      stderr: 'cellsched-manage: error: the API database URL is not set: pass --api-db-url or set CELLSCHED_API_DB_URL\n',
    });
    expect((await manage(['cell_v2', 'list_cells'], { CELLSCHED_API_DB_URL: api.url })).code).toBe(0);
    expect((await manage(['--help'])).code).toBe(0);
    expect((await manage([])).code).toBe(2);
  });
});
