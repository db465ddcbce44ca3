import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planEndpoints } from '../endpoints';
import { IMAGE, Stack, waitFor } from './harness';

// Ghost allocations (issue 12): `down --purge` must drop everything the system made, placement's
// data included, and nothing else; the manage audit must find an allocation no instance or
// migration holds, in any cell; a cell conductor's own audit must read its system's placement at
// a port offset. One system (brought up three times), plus a bystander placement whose prefix
// extends ours: a purge must not touch it.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2eaud${SEED}`, 3900 + (SEED % 100));
const ROOT = join(__dirname, '../..');
const ADMIN = process.env.CELLSCHED_PG_ADMIN_URL ?? 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres';
const AUDIT_GRACE_MS = 15_000;
const bystander = {
  prefix: `${stack.prefix}x`,
  offset: 3900 + ((SEED + 50) % 100),
  stateDir: mkdtempSync(join(tmpdir(), 'cellsched-e2e-bystander-')),
};
const bystanderFlags = ['--state-dir', bystander.stateDir, '--prefix', bystander.prefix, '--port-offset', String(bystander.offset)];
const bystanderUrl = planEndpoints(bystander.offset).placement;
const RES = { VCPU: 1, MEMORY_MB: 64, DISK_GB: 1 };
/** The cell conductors audit every second; a leak is healed AUDIT_GRACE_MS after it is first seen. */
const AUDIT_ENV = { CELLSCHED_AUDIT_INTERVAL_MS: '1000', CELLSCHED_AUDIT_GRACE_MS: String(AUDIT_GRACE_MS) };
const SHAPE = ['--cells', '2', '--hosts-per-cell', '2', '--schedulers', '1', '--build-latency-ms', '50'];

interface Server {
  id: string;
  status: string;
}

const rabbit = (...args: string[]): string => execFileSync('rabbitmqctl', ['-q', ...args], { encoding: 'utf8' });
const names = (out: string): string[] =>
  out
    .split('\n')
    .map((l) => l.split(/\s/)[0] ?? '')
    .filter(Boolean);

/** Every database, role, vhost and broker user whose name is `prefix_…`. */
async function leftovers(prefix: string): Promise<string[]> {
  const like = `${prefix}\\_%`;
  const pg = await stack.query<{ n: string }>(
    ADMIN,
    "SELECT 'db ' || datname AS n FROM pg_database WHERE datname LIKE $1 UNION ALL SELECT 'role ' || rolname FROM pg_roles WHERE rolname LIKE $1",
    [like],
  );
  const mine = (n: string): boolean => n.startsWith(`${prefix}_`);
  return [
    ...pg.map((r) => r.n),
    ...names(rabbit('list_vhosts', 'name'))
      .filter(mine)
      .map((v) => `vhost ${v}`),
    ...names(rabbit('list_users'))
      .filter(mine)
      .map((u) => `user ${u}`),
  ].sort();
}

async function placementAt<T>(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** Writes an allocation for `consumer` on `provider` behind every service's back (what a lost release leaves). */
async function leak(consumer: string, provider: string): Promise<void> {
  const r = await placementAt(stack.placementUrl, 'PUT', `/allocations/${consumer}`, {
    allocations: { [provider]: { resources: RES } },
    project_id: 'p1',
    user_id: 'u1',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });
  if (r.status !== 204) throw new Error(`PUT /allocations/${consumer}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** `cellsched-manage placement audit ...` against this system: exit code and stdout. */
function audit(...args: string[]): { code: number; out: string } {
  const r = spawnSync(
    'node',
    [
      'services/manage/dist/main.js',
      '--api-db-url',
      stack.topology().apiDbUrl,
      '--placement-url',
      stack.placementUrl,
      'placement',
      'audit',
      ...args,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

async function createServer(flavorRef: string, want: string): Promise<string> {
  const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
    server: { name: 'ghost', flavorRef, imageRef: IMAGE, networks: 'none' },
  });
  expect(r.status).toBe(202);
  const id = r.body.server.id;
  await waitFor(`${id} ${want}`, async () =>
    (await stack.api<{ server: Server }>('GET', `/servers/${id}`)).body.server.status === want ? true : undefined,
  );
  return id;
}

const providersOf = async (cell: string): Promise<string[]> =>
  (await stack.placement<{ resource_providers: { uuid: string; name: string }[] }>('/resource_providers')).resource_providers
    .filter((p) => p.name.startsWith(`${cell}-`))
    .map((p) => p.uuid);

beforeAll(async () => {
  console.log(
    `e2e ghost allocations: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}; bystander ${bystander.prefix} at ${bystander.offset}`,
  );
  execFileSync('node', ['scripts/stack.mjs', 'up', '--only', 'placement', ...bystanderFlags], {
    cwd: ROOT,
    stdio: 'ignore',
    timeout: 120_000,
  });
  expect((await placementAt(bystanderUrl, 'POST', '/resource_providers', { name: 'bystander', uuid: randomUUID() })).status).toBe(200);
  rabbit('add_vhost', `${bystander.prefix}_cell1`);
  await stack.query(ADMIN, `CREATE ROLE "${bystander.prefix}_scheduler" NOLOGIN`);
  stack.up(SHAPE, AUDIT_ENV);
}, 400_000);

afterAll(async () => {
  try {
    stack.down();
  } catch (e) {
    console.error(`stack down --purge: ${(e as Error).message}`);
  }
  execFileSync('node', ['scripts/stack.mjs', 'down', ...bystanderFlags], { cwd: ROOT, stdio: 'ignore', timeout: 120_000 });
  await stack.query(ADMIN, `DROP DATABASE IF EXISTS "${bystander.prefix}_placement" WITH (FORCE)`);
  for (const role of ['placement', 'scheduler']) await stack.query(ADMIN, `DROP ROLE IF EXISTS "${bystander.prefix}_${role}"`);
  try {
    rabbit('delete_vhost', `${bystander.prefix}_cell1`);
  } catch {
    /* absent */
  }
}, 180_000);

test('down --purge drops every database, role, vhost and file the system made (placement and a since-dropped cell included) and nothing else; the next up starts with no old allocation', async () => {
  const before = [await createServer('1', 'ACTIVE'), await createServer('1', 'ACTIVE')];
  expect((await stack.allocationsByConsumer()).size).toBe(2);
  // a later `up` with fewer cells: cell2's database, role and vhost are no longer in the plan, but the system made them
  stack.stop();
  stack.up(['--cells', '1', '--hosts-per-cell', '1', '--schedulers', '1'], AUDIT_ENV);
  stack.down();
  expect(await leftovers(stack.prefix)).toEqual([]);
  expect(readdirSync(stack.stateDir)).toEqual([]);
  // the bystander (a prefix extending ours) is untouched
  expect(
    (await placementAt<{ resource_providers: { name: string }[] }>(bystanderUrl, 'GET', '/resource_providers')).body.resource_providers.map(
      (p) => p.name,
    ),
  ).toEqual(['bystander']);
  expect(await leftovers(bystander.prefix)).toEqual([
    `db ${bystander.prefix}_placement`,
    `role ${bystander.prefix}_placement`,
    `role ${bystander.prefix}_scheduler`,
    `vhost ${bystander.prefix}_cell1`,
  ]);

  stack.up(SHAPE, AUDIT_ENV);
  expect((await stack.allocationsByConsumer()).size).toBe(0);
  const { resource_providers: rps } = await stack.placement<{ resource_providers: { uuid: string; name: string }[] }>(
    '/resource_providers',
  );
  expect(rps.map((p) => p.name).sort()).toEqual(['cell1-compute-1', 'cell1-compute-2', 'cell2-compute-1', 'cell2-compute-2']);
  for (const rp of rps) {
    const { usages } = await stack.placement<{ usages: Record<string, number> }>(`/resource_providers/${rp.uuid}/usages`);
    expect([rp.name, Object.entries(usages).filter(([, used]) => used !== 0)]).toEqual([rp.name, []]);
  }
  for (const id of before) expect((await stack.api('GET', `/servers/${id}`)).status).toBe(404);
});

test('placement audit finds, and with --delete removes, allocations no instance or migration holds in any cell (cell0 included); the servers keep theirs', async () => {
  stack.manage(['flavor-create', 'e2e.huge', '9901', '9000000', '1', '1']);
  const active = await createServer('1', 'ACTIVE');
  const buried = await createServer('9901', 'ERROR'); // NoValidHost: an ERROR instance in cell0
  const [rp] = await providersOf('cell1');
  const orphan = randomUUID();
  await leak(orphan, rp ?? '');
  await leak(buried, rp ?? '');
  const found = audit('--verbose');
  expect(found.code).toBe(3);
  expect(found.out).toContain(
    `Allocations were set against consumer UUID ${orphan} but no existing instances or active migrations are related.`,
  );
  expect(found.out).toContain(`Allocations were set against consumer UUID ${buried} but the instance is in ERROR in cell0`);
  expect(found.out).not.toContain(active);
  expect(found.out).toContain('Processed 2 allocations.');
  const deleted = audit('--delete');
  expect(deleted.code).toBe(4);
  const left = await stack.allocationsByConsumer();
  expect([...left.keys()]).toEqual([active]);
  expect(audit().code).toBe(0);
  await stack.api('DELETE', `/servers/${active}`);
  await stack.api('DELETE', `/servers/${buried}`);
});

test("a cell conductor's periodic audit at a port offset reads its own system's placement: it heals a leaked allocation", async () => {
  const [rp] = await providersOf('cell2');
  const leaked = randomUUID();
  await leak(leaked, rp ?? '');
  const t0 = Date.now();
  await waitFor(
    'the cell2 conductor to heal the leak',
    async () => ((await stack.allocationsByConsumer()).has(leaked) ? undefined : true),
    AUDIT_GRACE_MS + 45_000,
  );
  console.log(`leak healed after ${Date.now() - t0} ms`);
  const healed = readFileSync(stack.logFile('cell-conductor-cell2'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"allocation audit"') && l.includes(leaked));
  expect(healed.length).toBeGreaterThan(0);
  expect(readFileSync(stack.logFile('cell-conductor-cell2'), 'utf8')).not.toContain('allocation audit failed');
});
