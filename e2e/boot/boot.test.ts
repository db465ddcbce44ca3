import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { IMAGE, Stack, waitFor, type Topology } from './harness';

// One whole system for this file: 2 cells x 4 simulated hosts, 2 schedulers, 20 % of builds
// failing reschedulably (DESIGN step 5), max_attempts 3 (2 alternates).
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2eboot${SEED}`, 2000 + (SEED % 1000));
const MAX_RETRIES = 'Exceeded maximum number of retries';

interface Server { id: string; status: string; fault?: { message: string; details?: string }; 'OS-EXT-SRV-ATTR:host': string | null }
interface InstanceRow { uuid: string; vm_state: string; host: string | null }

beforeAll(() => {
  console.log(`e2e boot: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '2', '--hosts-per-cell', '4', '--schedulers', '2', '--build-failure-rate', '0.2', '--build-latency-ms', '50']);
  stack.manage(['flavor-create', 'e2e.huge', '9901', '9000000', '1', '1']);
}, 400_000);

afterAll(() => stack.down(), 120_000);

async function createServer(name: string, flavorRef: string): Promise<string> {
  const r = await stack.api<{ server: { id: string } }>('POST', '/servers', { server: { name, flavorRef, imageRef: IMAGE, networks: 'none' } });
  expect(r.status).toBe(202);
  return r.body.server.id;
}

async function settled(ids: readonly string[]): Promise<Map<string, Server>> {
  return waitFor(`${ids.length} servers to settle`, async () => {
    const r = await stack.api<{ servers: Server[] }>('GET', '/servers/detail?limit=1000');
    const byId = new Map(r.body.servers.filter((s) => ids.includes(s.id)).map((s) => [s.id, s]));
    const done = ids.every((id) => ['ACTIVE', 'ERROR'].includes(byId.get(id)?.status ?? ''));
    return done ? byId : undefined;
  }, 300_000);
}

/** Live instances of every cell DB (cell0 included), read with each cell's own credentials: uuid → [cell name, row]. */
async function instancesByCell(): Promise<Map<string, [string, InstanceRow]>> {
  const t = stack.topology();
  const out = new Map<string, [string, InstanceRow]>();
  for (const c of [t.cell0, ...t.cells]) {
    const rows = await stack.query<InstanceRow>(c.dbUrl, 'SELECT uuid::text, vm_state, host FROM instances WHERE deleted_at IS NULL');
    for (const r of rows) out.set(r.uuid, [c.name, r]);
  }
  return out;
}

/** Hosts of every build event per instance (the compute's and the cell conductor's), read from the instance's cell. */
async function eventHosts(dbUrl: string): Promise<Map<string, string[]>> {
  const rows = await stack.query<{ uuid: string; host: string }>(dbUrl,
    `SELECT a.instance_uuid::text AS uuid, e.host FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id WHERE e.host IS NOT NULL`);
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.uuid, [...(out.get(r.uuid) ?? []), r.host]);
  return out;
}

test('servers created through the API end ACTIVE on a host of one cell, holding exactly that host\'s allocation', async () => {
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await createServer(`boot-${i}`, '1'));
  const servers = await settled(ids);
  const cells = await instancesByCell();
  const allocations = await stack.allocationsByConsumer();
  let active = 0;
  for (const id of ids) {
    const s = servers.get(id) as Server;
    const [cell, row] = cells.get(id) ?? ['none', undefined];
    expect(cell).toMatch(/^cell[12]$/);
    if (s.status === 'ERROR') { expect(s.fault?.message).toContain(MAX_RETRIES); expect(allocations.has(id)).toBe(false); continue; }
    active++;
    expect(row?.vm_state).toBe('active');
    expect(s['OS-EXT-SRV-ATTR:host']).toBe(row?.host);
    expect(row?.host?.startsWith(`${cell}-`)).toBe(true);
    expect([...(allocations.get(id)?.keys() ?? [])]).toEqual([row?.host]);
  }
  expect(active).toBeGreaterThan(0);
});

test('deleting ACTIVE servers removes them from the API and releases their allocations', async () => {
  const ids = [await createServer('del-0', '1'), await createServer('del-1', '1')];
  const servers = await settled(ids);
  for (const id of ids) expect((await stack.api('DELETE', `/servers/${id}`)).status).toBe(204);
  await waitFor('deleted servers to be gone', async () => {
    const codes = await Promise.all(ids.map(async (id) => (await stack.api('GET', `/servers/${id}`)).status));
    return codes.every((c) => c === 404) ? true : undefined;
  }, 60_000);
  const allocations = await waitFor('allocations released', async () => {
    const a = await stack.allocationsByConsumer();
    return ids.some((id) => a.has(id)) ? undefined : a;
  }, 60_000);
  for (const id of ids) expect(allocations.has(id)).toBe(false);
  const cells = await instancesByCell();
  for (const id of ids) expect(cells.has(id)).toBe(false); // soft-deleted in its cell
  expect(servers.size).toBe(2);
});

test('a request no host can fit lands in cell 0 in ERROR with the scheduler\'s diagnosis and no allocation', async () => {
  const id = await createServer('too-big', '9901');
  const s = (await settled([id])).get(id) as Server;
  expect(s.status).toBe('ERROR');
  expect(s.fault?.message).toMatch(/^No valid host was found/);
  expect(s.fault?.details ?? '').toContain('scheduler.no_valid_host');
  const [cell, row] = (await instancesByCell()).get(id) ?? [];
  expect(cell).toBe('cell0');
  expect(row?.vm_state).toBe('error');
  expect((await stack.allocationsByConsumer()).has(id)).toBe(false);
  const t = stack.topology();
  const mapped = await stack.query<{ cell: string }>(t.apiDbUrl,
    'SELECT c.uuid::text AS cell FROM instance_mappings m JOIN cell_mappings c ON c.id = m.cell_id WHERE m.instance_uuid = $1', [id]);
  expect(mapped).toEqual([{ cell: t.cell0.uuid }]);
  const brs = await stack.query(t.apiDbUrl, 'SELECT 1 FROM build_requests WHERE instance_uuid = $1', [id]);
  expect(brs).toHaveLength(0);
});

test('200 servers in bursts with 20% reschedulable failures: ACTIVE or max-retries ERROR, retries stay in the cell, allocations = ACTIVE', async () => {
  const spansBefore = readFileSync(stack.spansFile(), 'utf8').split('\n').length;
  const ids: string[] = [];
  for (let burst = 0; burst < 10; burst++) {
    ids.push(...await Promise.all(Array.from({ length: 20 }, (_, i) => createServer(`burst-${burst}-${i}`, '1'))));
  }
  const servers = await settled(ids);
  const cells = await instancesByCell();
  const t = stack.topology();
  const hostsOf = new Map<string, string[]>();
  for (const c of t.cells) for (const [uuid, hosts] of await eventHosts(c.dbUrl)) hostsOf.set(uuid, hosts);
  const allocations = await stack.allocationsByConsumer();
  const statuses = { ACTIVE: 0, ERROR: 0 };
  for (const id of ids) {
    const s = servers.get(id) as Server;
    const [cell, row] = cells.get(id) ?? ['none', undefined];
    statuses[s.status as 'ACTIVE' | 'ERROR']++;
    expect(cell).toMatch(/^cell[12]$/);
    // every build attempt, reschedules included, ran on a host of the first choice's cell
    for (const h of hostsOf.get(id) ?? []) expect(h.startsWith(`${cell}-`)).toBe(true);
    if (s.status === 'ACTIVE') {
      expect([...(allocations.get(id)?.keys() ?? [])]).toEqual([row?.host]);
    } else {
      expect(s.fault?.message).toContain(MAX_RETRIES);
      expect(new Set(hostsOf.get(id)).size).toBe(3); // chosen + 2 alternates all tried
      expect(allocations.has(id)).toBe(false);
    }
  }
  // placement holds allocations for exactly the ACTIVE instances (of this test and the first)
  const activeAll = [...cells.entries()].filter(([, [, r]]) => r.vm_state === 'active').map(([u]) => u).sort();
  expect([...allocations.keys()].sort()).toEqual(activeAll);
  // the scheduler was asked exactly once per create request (one SelectDestinations client span per trace)
  const lines = readFileSync(stack.spansFile(), 'utf8').split('\n').slice(spansBefore - 1).filter((l) => l !== '');
  const selectTraces: string[] = [];
  for (const l of lines) {
    for (const rs of JSON.parse(l).resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const sp of ss.spans ?? []) {
      if (sp.name === 'grpc.cellsched.v1.SchedulerService/SelectDestinations' && sp.kind === 3) selectTraces.push(sp.traceId);
    }
  }
  expect(selectTraces).toHaveLength(ids.length);
  expect(new Set(selectTraces).size).toBe(ids.length);
  console.log(`200 servers: ${statuses.ACTIVE} ACTIVE, ${statuses.ERROR} ERROR (max retries)`);
  expect(statuses.ACTIVE).toBeGreaterThan(180);
});

test("a cell's credentials are refused by the API database, the API vhost and the other cell's", async () => {
  const t = stack.topology();
  const [c1, c2] = t.cells as [Topology['cells'][0], Topology['cells'][0]];
  const asCell1 = (db: string): string => { const u = new URL(c1.dbUrl); u.pathname = `/${new URL(db).pathname.slice(1)}`; return u.toString(); };
  await expect(stack.query(asCell1(t.apiDbUrl), 'SELECT 1')).rejects.toThrow(/permission denied|not permitted/);
  await expect(stack.query(asCell1(c2.dbUrl), 'SELECT 1')).rejects.toThrow(/permission denied|not permitted/);
  await expect(stack.query(c1.dbUrl, 'SELECT 1')).resolves.toHaveLength(1);
  // amqplib through @cellsched/bus (the e2e package has no broker client of its own)
  const amqp = createRequire(join(__dirname, '../../packages/bus/package.json'))('amqplib') as { connect(url: string): Promise<{ close(): Promise<void> }> };
  const asCell1Vhost = (url: string): string => { const u = new URL(c1.transportUrl); u.pathname = new URL(url).pathname; return u.toString(); };
  await expect(amqp.connect(asCell1Vhost(stack.apiTransportUrl()))).rejects.toThrow();
  await expect(amqp.connect(asCell1Vhost(c2.transportUrl))).rejects.toThrow();
  const ok = await amqp.connect(c1.transportUrl);
  await ok.close();
});
