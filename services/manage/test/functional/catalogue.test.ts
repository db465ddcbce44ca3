import { randomUUID } from 'node:crypto';
import { API_DB_MIGRATIONS_DIR, getFlavorByName, getImage } from '@cellsched/api-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { buildManage, manage } from './cli-support';

let api: TestDatabase;
const run = (...args: string[]) => manage(['--api-db-url', api.url, ...args]);

beforeAll(async () => {
  buildManage();
  api = await createTestDatabase({ prefix: 'mng_cat', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR, poolMax: 2 });
}, 120_000);
afterAll(async () => {
  await api.drop();
});

describe('cellsched-manage image-* and flavor-* (child processes)', () => {
  it('image-create adds an image with properties and prints it; a repeated id exits 1', async () => {
    const id = randomUUID();
    const r = await run(
      'image-create',
      '--name',
      'cirros',
      '--id',
      id,
      '--disk-format',
      'qcow2',
      '--min-disk',
      '1',
      '--min-ram',
      '64',
      '--size',
      '13312',
      '--property',
      'hw_architecture=x86_64',
      '--property',
      'trait:HW_CPU_X86_AVX2=required',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`\\|\\s+id\\s+\\|\\s+${id}\\s+\\|`));
    expect(r.stdout).toMatch(/\|\s+hw_architecture\s+\|\s+x86_64\s+\|/);
    expect(await getImage(api.pool, id)).toMatchObject({
      name: 'cirros',
      diskFormat: 'qcow2',
      containerFormat: 'bare',
      minDisk: 1,
      minRam: 64,
      size: 13312,
      properties: { hw_architecture: 'x86_64', 'trait:HW_CPU_X86_AVX2': 'required' },
    });
    expect(await run('image-create', '--name', 'again', '--id', id)).toEqual({
      code: 1,
      stdout: '',
      stderr: `Image ${id} already exists.\n`,
    });
    const list = await run('image-list');
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('155d900f-4e14-4e4c-a73d-069cbf4541e6');
  });

  it('image-create refuses bad input (exit 2) and writes nothing', async () => {
    const before = (await run('image-list')).stdout;
    expect((await run('image-create', '--id', randomUUID())).stderr).toBe('cellsched-manage: error: argument --name is required\n');
    expect((await run('image-create', '--name', 'x', '--disk-format', 'exe')).code).toBe(2);
    expect((await run('image-create', '--name', 'x', '--min-ram', '-5')).code).toBe(2);
    expect((await run('image-create', '--name', 'x', '--property', 'noequals')).code).toBe(2);
    expect((await run('image-list')).stdout).toBe(before);
  });

  it('flavor-create makes a flavor with extra specs; duplicates and bad numbers are refused', async () => {
    const r = await run(
      'flavor-create',
      'gpu.small',
      'auto',
      '2048',
      '20',
      '2',
      '--ephemeral',
      '5',
      '--property',
      'resources:CUSTOM_GPU=1',
      '--is-public',
      'false',
    );
    expect(r.code).toBe(0);
    const flavor = await getFlavorByName(api.pool, 'gpu.small');
    expect(flavor).toMatchObject({
      memoryMb: 2048,
      rootGb: 20,
      vcpus: 2,
      ephemeralGb: 5,
      isPublic: false,
      extraSpecs: { 'resources:CUSTOM_GPU': '1' },
    });
    expect(flavor?.flavorid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.stdout).toContain(flavor?.flavorid ?? 'missing');
    const dup = await run('flavor-create', 'gpu.small', '77', '1', '1', '1');
    expect(dup).toEqual({ code: 1, stdout: '', stderr: 'ERROR: Flavor with name gpu.small already exists.\n' });
    expect((await run('flavor-create', 'x', '78', '0', '1', '1')).stderr).toBe(
      'cellsched-manage: error: RAM_MB must be an integer >= 1, got "0"\n',
    );
    expect((await run('flavor-create', 'x', '78', '1', '1')).code).toBe(2);
    const list = await run('flavor-list');
    // Sorted by flavorid (Nova's default), so where the generated uuid lands varies: compare as sets.
    const names = list.stdout
      .split('\n')
      .filter((l) => /^\| /.test(l))
      .map((l) => l.split('|')[2]?.trim());
    expect(names.sort()).toEqual(['Name', 'gpu.small', 'm1.large', 'm1.medium', 'm1.small', 'm1.tiny', 'm1.xlarge']);
  });
});
