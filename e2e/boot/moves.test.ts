import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { IMAGE, Stack, waitFor } from './harness';

// Every server action of issue 13 on the whole system (2 cells of 3 simulated hosts), through
// Nova's REST API, each step ending with placement holding exactly what Nova holds: the instance
// on its current host with its current flavor; during VERIFY_RESIZE the migration consumer on the
// source (old flavor) and the instance on the destination (new flavor); nothing for a
// shelved-offloaded instance; nothing for any migration once it is over. Moves stay in the
// instance's cell.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2emove${SEED}`, 4300 + (SEED % 100));
const TINY = { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 };
const SMALL = { VCPU: 1, MEMORY_MB: 2048, DISK_GB: 20 };

interface Server {
  id: string;
  status: string;
  'OS-EXT-STS:task_state': string | null;
  'OS-EXT-STS:vm_state': string;
  'OS-EXT-STS:power_state': number;
  'OS-EXT-SRV-ATTR:host': string | null;
  flavor: { original_name: string };
  fault?: { message: string };
}
interface Migration {
  id: number;
  uuid: string;
  status: string;
  migration_type: string;
  instance_uuid: string;
  source_compute: string;
  dest_compute: string | null;
}

beforeAll(() => {
  console.log(`e2e moves: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '2', '--hosts-per-cell', '3', '--schedulers', '1', '--build-latency-ms', '50']);
}, 400_000);

afterAll(() => stack.down(), 120_000);

async function server(id: string): Promise<Server> {
  const r = await stack.api<{ server: Server }>('GET', `/servers/${id}`);
  expect(r.status).toBe(200);
  return r.body.server;
}

async function waitStatus(id: string, status: string, timeoutMs = 90_000): Promise<Server> {
  return waitFor(
    `${id} ${status}`,
    async () => {
      const s = await server(id);
      if (s.status === 'ERROR' && status !== 'ERROR') throw new Error(`${id} went to ERROR: ${s.fault?.message ?? 'no fault'}`);
      return s.status === status && s['OS-EXT-STS:task_state'] === null ? s : undefined;
    },
    timeoutMs,
  );
}

async function boot(name: string, flavorRef = '1'): Promise<Server> {
  const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
    server: { name, flavorRef, imageRef: IMAGE, networks: 'none' },
  });
  expect(r.status).toBe(202);
  return waitStatus(r.body.server.id, 'ACTIVE');
}

async function act(id: string, body: unknown, expected = 202): Promise<unknown> {
  const r = await stack.api('POST', `/servers/${id}/action`, body);
  if (r.status !== expected) throw new Error(`POST /servers/${id}/action ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The consumer's allocations: provider (host) name → resources. */
async function held(consumer: string): Promise<Record<string, Record<string, number>>> {
  const { allocations } = await stack.placement<{ allocations: Record<string, { resources: Record<string, number> }> }>(
    `/allocations/${consumer}`,
  );
  const { resource_providers: rps } = await stack.placement<{ resource_providers: { uuid: string; name: string }[] }>(
    '/resource_providers',
  );
  const names = new Map(rps.map((rp) => [rp.uuid, rp.name]));
  return Object.fromEntries(Object.entries(allocations).map(([rp, a]) => [names.get(rp) ?? rp, a.resources]));
}

async function migrationsOf(id: string): Promise<Migration[]> {
  const r = await stack.api<{ migrations: Migration[] }>('GET', `/os-migrations?instance_uuid=${id}`);
  expect(r.status).toBe(200);
  return r.body.migrations;
}

/** Nothing held by any of the instance's migrations. */
async function noMigrationHolds(id: string): Promise<void> {
  for (const m of await migrationsOf(id)) expect({ migration: m.uuid, held: await held(m.uuid) }).toEqual({ migration: m.uuid, held: {} });
}

const cellOf = (host: string | null): string => (host ?? '').split('-compute-')[0] ?? '';

/** The flavor name of the server's RequestSpec in the API DB (what later moves are scheduled with, in Nova). */
async function specFlavor(id: string): Promise<string | undefined> {
  const [row] = await stack.query<{ name: string | null }>(
    stack.topology().apiDbUrl,
    "SELECT spec->'flavor'->>'name' AS name FROM request_specs WHERE instance_uuid = $1",
    [id],
  );
  return row?.name ?? undefined;
}

test('stop, start, soft and hard reboot: Nova states, the allocation untouched, one action each with its event', async () => {
  const s = await boot('life');
  const host = s['OS-EXT-SRV-ATTR:host'] ?? '';
  await act(s.id, { 'os-stop': null });
  const stopped = await waitStatus(s.id, 'SHUTOFF');
  expect([stopped['OS-EXT-STS:vm_state'], stopped['OS-EXT-STS:power_state']]).toEqual(['stopped', 4]);
  expect(await held(s.id)).toEqual({ [host]: TINY });
  await act(s.id, { 'os-stop': null }, 409); // Nova: Cannot 'stop' instance while it is in vm_state stopped
  await act(s.id, { 'os-start': null });
  await waitStatus(s.id, 'ACTIVE');
  await act(s.id, { reboot: { type: 'SOFT' } });
  await waitStatus(s.id, 'ACTIVE');
  await act(s.id, { reboot: { type: 'HARD' } });
  const back = await waitStatus(s.id, 'ACTIVE');
  expect(back['OS-EXT-SRV-ATTR:host']).toBe(host);
  expect(await held(s.id)).toEqual({ [host]: TINY });
  const actions = await stack.api<{ instanceActions: { action: string; request_id: string }[] }>(
    'GET',
    `/servers/${s.id}/os-instance-actions`,
  );
  expect(actions.body.instanceActions.map((a) => a.action).sort()).toEqual(['create', 'reboot', 'reboot', 'start', 'stop']);
  const stop = actions.body.instanceActions.find((a) => a.action === 'stop');
  const events = await stack.api<{ instanceAction: { events: { event: string; result: string; host: string }[] } }>(
    'GET',
    `/servers/${s.id}/os-instance-actions/${stop?.request_id ?? ''}`,
  );
  expect(events.body.instanceAction.events).toEqual([expect.objectContaining({ event: 'compute_stop_instance', result: 'Success', host })]);
  await act(s.id, { reboot: { type: 'WARM' } }, 400);
});

test('cold migrate then confirm: VERIFY_RESIZE holds the source on the migration and the destination on the instance, in the same cell; confirm frees the source', async () => {
  const s = await boot('mig');
  const src = s['OS-EXT-SRV-ATTR:host'] ?? '';
  await act(s.id, { migrate: null });
  const v = await waitStatus(s.id, 'VERIFY_RESIZE');
  const dst = v['OS-EXT-SRV-ATTR:host'] ?? '';
  expect(dst).not.toBe(src);
  expect(cellOf(dst)).toBe(cellOf(src));
  const [m] = await migrationsOf(s.id);
  expect(m).toMatchObject({ status: 'finished', migration_type: 'migration', source_compute: src, dest_compute: dst });
  expect(await held(s.id)).toEqual({ [dst]: TINY });
  expect(await held(m?.uuid ?? '')).toEqual({ [src]: TINY });
  const confirm = await stack.api('POST', `/servers/${s.id}/action`, { confirmResize: null });
  expect(confirm.status).toBe(204);
  await waitStatus(s.id, 'ACTIVE');
  await waitFor('the migration confirmed', async () => ((await migrationsOf(s.id))[0]?.status === 'confirmed' ? true : undefined), 30_000);
  expect(await held(s.id)).toEqual({ [dst]: TINY });
  await noMigrationHolds(s.id);
  await act(s.id, { confirmResize: null }, 409); // Nova: Cannot 'confirmResize' instance while it is in vm_state active
});

test('resize then revert: the new flavor during VERIFY_RESIZE, the old flavor on the source after the revert, the migration holding nothing', async () => {
  const s = await boot('rsz');
  const src = s['OS-EXT-SRV-ATTR:host'] ?? '';
  await act(s.id, { resize: { flavorRef: '1' } }, 400); // same flavor
  await act(s.id, { resize: { flavorRef: '2' } });
  const v = await waitStatus(s.id, 'VERIFY_RESIZE');
  expect(v.flavor.original_name).toBe('m1.small');
  const dst = v['OS-EXT-SRV-ATTR:host'] ?? '';
  const [m] = await migrationsOf(s.id);
  expect(m?.migration_type).toBe('resize');
  expect(await held(s.id)).toEqual({ [dst]: SMALL });
  expect(await held(m?.uuid ?? '')).toEqual({ [src]: TINY });
  await act(s.id, { revertResize: null });
  const back = await waitStatus(s.id, 'ACTIVE');
  expect([back['OS-EXT-SRV-ATTR:host'], back.flavor.original_name]).toEqual([src, 'm1.tiny']);
  expect((await migrationsOf(s.id))[0]?.status).toBe('reverted');
  expect(await held(s.id)).toEqual({ [src]: TINY });
  await noMigrationHolds(s.id);
  // the RequestSpec has the old flavor again (Nova's revert does it), and a migrate after the revert claims the old flavor on its new host
  expect(await specFlavor(s.id)).toBe('m1.tiny');
  await act(s.id, { migrate: null });
  const moved = await waitStatus(s.id, 'VERIFY_RESIZE');
  const mdst = moved['OS-EXT-SRV-ATTR:host'] ?? '';
  const mig = (await migrationsOf(s.id)).find((x) => x.migration_type === 'migration');
  expect(moved.flavor.original_name).toBe('m1.tiny');
  expect(await held(s.id)).toEqual({ [mdst]: TINY });
  expect(await held(mig?.uuid ?? '')).toEqual({ [src]: TINY });
  await act(s.id, { confirmResize: null }, 204);
  await waitStatus(s.id, 'ACTIVE');
  // resize again and confirm: the new flavor stays
  await act(s.id, { resize: { flavorRef: '2' } });
  const v2 = await waitStatus(s.id, 'VERIFY_RESIZE');
  await act(s.id, { confirmResize: null }, 204);
  const done = await waitStatus(s.id, 'ACTIVE');
  expect([done['OS-EXT-SRV-ATTR:host'], done.flavor.original_name]).toEqual([v2['OS-EXT-SRV-ATTR:host'], 'm1.small']);
  await waitFor(
    'migrations over',
    async () => ((await migrationsOf(s.id)).every((x) => ['confirmed', 'reverted'].includes(x.status)) ? true : undefined),
    30_000,
  );
  expect(await held(s.id)).toEqual({ [v2['OS-EXT-SRV-ATTR:host'] ?? '']: SMALL });
  await noMigrationHolds(s.id);
  expect(await specFlavor(s.id)).toBe('m1.small');
});

test("confirm while the source never answers (the confirm hung there, then its compute forced down): ACTIVE on the destination, the migration confirmed and holding nothing, the source's copy destroyed", async () => {
  const s = await boot('deadsrc');
  const src = s['OS-EXT-SRV-ATTR:host'] ?? '';
  await act(s.id, { migrate: null });
  const dst = (await waitStatus(s.id, 'VERIFY_RESIZE'))['OS-EXT-SRV-ATTR:host'] ?? '';
  expect((await stack.guests()).get(s.id)?.sort()).toEqual([src, dst].sort());
  const before = await stack.setFaults({ steps: { confirm_resize: { hang: true, hosts: [src] } } });
  const services = await stack.api<{ services: { id: string }[] }>('GET', `/os-services?host=${src}&binary=nova-compute`);
  const svc = services.body.services[0]?.id ?? '';
  try {
    // Nova's API refuses a confirm while the source is down (409): the confirm is accepted with the source up, hangs there, then the source goes
    await act(s.id, { confirmResize: null }, 204);
    expect((await stack.api('PUT', `/os-services/${svc}`, { forced_down: true })).status).toBe(200);
    const done = await waitStatus(s.id, 'ACTIVE', 60_000);
    expect([done['OS-EXT-SRV-ATTR:host'], done['OS-EXT-STS:vm_state']]).toEqual([dst, 'active']);
    await waitFor(
      'the migration confirmed',
      async () => ((await migrationsOf(s.id))[0]?.status === 'confirmed' ? true : undefined),
      30_000,
    );
    expect(await held(s.id)).toEqual({ [dst]: TINY });
    await noMigrationHolds(s.id);
    const actions = await stack.api<{ instanceActions: { action: string; request_id: string }[] }>(
      'GET',
      `/servers/${s.id}/os-instance-actions`,
    );
    const confirm = actions.body.instanceActions.find((a) => a.action === 'confirmResize');
    const detail = await stack.api<{ instanceAction: { events: { event: string; result: string; host: string }[] } }>(
      'GET',
      `/servers/${s.id}/os-instance-actions/${confirm?.request_id ?? ''}`,
    );
    expect(detail.body.instanceAction.events).toEqual([
      expect.objectContaining({ event: 'compute_confirm_resize', result: 'Error', host: src }),
    ]);
    // the terminate queued on the source is taken by its compute (alive, only its confirm hangs): one guest left
    await waitFor(
      'one guest',
      async () => (JSON.stringify((await stack.guests()).get(s.id)) === JSON.stringify([dst]) ? true : undefined),
      30_000,
    );
  } finally {
    await stack.setFaults({ steps: (before[0] as { steps?: unknown } | undefined)?.steps ?? {} });
    await stack.api('PUT', `/os-services/${svc}`, { forced_down: false });
  }
});

test('live migration: ACTIVE on another host of the cell, the migration completed and holding nothing, the guest on one host, placed with the block_migration asked for', async () => {
  const s = await boot('live');
  const src = s['OS-EXT-SRV-ATTR:host'] ?? '';
  await act(s.id, { 'os-migrateLive': { host: null, block_migration: true } });
  const done = await waitFor('live migration over', async () => {
    const x = await server(s.id);
    return x.status === 'ACTIVE' && x['OS-EXT-SRV-ATTR:host'] !== src ? x : undefined;
  });
  const dst = done['OS-EXT-SRV-ATTR:host'] ?? '';
  expect(cellOf(dst)).toBe(cellOf(src));
  await waitFor('the migration completed', async () => ((await migrationsOf(s.id))[0]?.status === 'completed' ? true : undefined), 30_000);
  expect((await migrationsOf(s.id))[0]?.migration_type).toBe('live-migration');
  expect(await held(s.id)).toEqual({ [dst]: TINY });
  await noMigrationHolds(s.id);
  expect((await stack.guests()).get(s.id)).toEqual([dst]);
  expect((await stack.guestDetails()).get(s.id)).toEqual({ [dst]: expect.objectContaining({ power: 'running', blockMigration: 'true' }) });
});

test('shelve offloads at once and holds nothing; unshelve schedules afresh in the cell', async () => {
  const s = await boot('shelf');
  await act(s.id, { shelveOffload: null }, 409); // only a SHELVED server can be offloaded
  await act(s.id, { shelve: null });
  const off = await waitStatus(s.id, 'SHELVED_OFFLOADED');
  expect(off['OS-EXT-SRV-ATTR:host']).toBeNull();
  expect(await held(s.id)).toEqual({});
  expect((await stack.guests()).get(s.id)).toBeUndefined();
  await act(s.id, { unshelve: null });
  const on = await waitStatus(s.id, 'ACTIVE');
  const host = on['OS-EXT-SRV-ATTR:host'] ?? '';
  expect(cellOf(host)).toBe(cellOf(s['OS-EXT-SRV-ATTR:host']));
  expect(await held(s.id)).toEqual({ [host]: TINY });
});

test('rebuild stays on its host with its allocation', async () => {
  const s = await boot('rebuild');
  const host = s['OS-EXT-SRV-ATTR:host'] ?? '';
  const r = await stack.api<{ server: { id: string } }>('POST', `/servers/${s.id}/action`, {
    rebuild: { imageRef: IMAGE, name: 'rebuilt' },
  });
  expect(r.status).toBe(202);
  expect(r.body.server.id).toBe(s.id);
  const done = await waitStatus(s.id, 'ACTIVE');
  expect(done['OS-EXT-SRV-ATTR:host']).toBe(host);
  expect(await held(s.id)).toEqual({ [host]: TINY });
});

test('delete during VERIFY_RESIZE leaves nothing: no allocation for the instance or its migration, no guest on either host', async () => {
  const s = await boot('del');
  await act(s.id, { resize: { flavorRef: '2' } });
  await waitStatus(s.id, 'VERIFY_RESIZE');
  const [m] = await migrationsOf(s.id);
  expect((await stack.api('DELETE', `/servers/${s.id}`)).status).toBe(204);
  await waitFor(`${s.id} gone`, async () => ((await stack.api('GET', `/servers/${s.id}`)).status === 404 ? true : undefined));
  await waitFor(
    'nothing held',
    async () => (Object.keys(await held(s.id)).length === 0 && Object.keys(await held(m?.uuid ?? '')).length === 0 ? true : undefined),
    30_000,
  );
  await waitFor('no guest', async () => ((await stack.guests()).has(s.id) ? undefined : true), 30_000);
});

test('evacuate: refused while the source is up; with it forced down, rebuilt on another host of the cell; the source drops its copy and its allocation once it is back', async () => {
  const s = await boot('evac');
  const src = s['OS-EXT-SRV-ATTR:host'] ?? '';
  const refused = await stack.api<{ badRequest: { message: string } }>('POST', `/servers/${s.id}/action`, { evacuate: {} });
  expect(refused.status).toBe(400);
  expect(refused.body.badRequest.message).toBe(`Compute service of ${src} is still in use.`);
  const services = await stack.api<{ services: { id: string; host: string; binary: string }[] }>(
    'GET',
    `/os-services?host=${src}&binary=nova-compute`,
  );
  const svc = services.body.services[0]?.id ?? '';
  const down = await stack.api<{ service: { forced_down: boolean; state: string } }>('PUT', `/os-services/${svc}`, { forced_down: true });
  expect(down.status).toBe(200);
  expect(down.body.service.forced_down).toBe(true);
  // answered once the cell has it (as Nova's synchronous write): the evacuate right after finds the host down
  await act(s.id, { evacuate: {} }, 200);
  const moved = await waitFor('evacuated', async () => {
    const x = await server(s.id);
    return x.status === 'ACTIVE' && x['OS-EXT-SRV-ATTR:host'] !== src ? x : undefined;
  });
  const dst = moved['OS-EXT-SRV-ATTR:host'] ?? '';
  expect(cellOf(dst)).toBe(cellOf(src));
  expect((await migrationsOf(s.id))[0]?.migration_type).toBe('evacuation');
  expect((await held(s.id))[dst]).toEqual(TINY);
  // the source's compute is still heard from (forced down, not dead): it drops its copy and the
  // source allocation goes, the migration completes; then forcing it up is allowed (Nova refuses
  // while 'done' evacuations remain on the host)
  await waitFor('the source cleaned up', async () => ((await migrationsOf(s.id))[0]?.status === 'completed' ? true : undefined), 60_000);
  expect((await stack.api('PUT', `/os-services/${svc}`, { forced_down: false })).status).toBe(200);
  expect(await held(s.id)).toEqual({ [dst]: TINY });
  await noMigrationHolds(s.id);
  await waitFor(
    'one guest',
    async () => (JSON.stringify((await stack.guests()).get(s.id)) === JSON.stringify([dst]) ? true : undefined),
    30_000,
  );
});

test('a resize whose first destination fails its prep lands on the alternate in the same cell, and its trace shows the failed attempt and the retry', async () => {
  const s = await boot('retry');
  const src = s['OS-EXT-SRV-ATTR:host'] ?? '';
  const others = [1, 2, 3].map((i) => `${cellOf(src)}-compute-${i}`).filter((h) => h !== src);
  // both candidate destinations: prep_resize fails there, held until we know which one the scheduler chose
  const before = await stack.setFaults({ steps: { prep_resize: { failRate: 1, hang: true, hosts: others } } });
  try {
    await act(s.id, { resize: { flavorRef: '2' } });
    const first = await waitFor('the first destination', async () => (await migrationsOf(s.id))[0]?.dest_compute ?? undefined, 30_000);
    expect(others).toContain(first);
    // release it (its prep fails), and let the alternate's prep succeed
    await stack.setFaults({ steps: { prep_resize: { failRate: 1, hosts: [first] } } });
    const v = await waitStatus(s.id, 'VERIFY_RESIZE');
    const dst = v['OS-EXT-SRV-ATTR:host'] ?? '';
    expect(dst).toBe(others.find((h) => h !== first));
    const [m] = await migrationsOf(s.id);
    expect(m?.dest_compute).toBe(dst);
    expect(await held(s.id)).toEqual({ [dst]: SMALL });
    expect(await held(m?.uuid ?? '')).toEqual({ [src]: TINY });
    expect(await held(s.id)).not.toHaveProperty(first);
    // the action's events: prep_resize failed on the first destination, then succeeded on the alternate
    const actions = await stack.api<{ instanceActions: { action: string; request_id: string }[] }>(
      'GET',
      `/servers/${s.id}/os-instance-actions`,
    );
    const resize = actions.body.instanceActions.find((a) => a.action === 'resize');
    const detail = await stack.api<{ instanceAction: { events: { event: string; result: string; host: string }[] } }>(
      'GET',
      `/servers/${s.id}/os-instance-actions/${resize?.request_id ?? ''}`,
    );
    const preps = detail.body.instanceAction.events.filter((e) => e.event === 'compute_prep_resize').map((e) => [e.host, e.result]);
    expect(preps).toEqual(
      expect.arrayContaining([
        [first, 'Error'],
        [dst, 'Success'],
      ]),
    );
    // the operators' trace tail: the resize's trace names the server, and shows both prep casts and the failed result
    const out = await waitFor(
      'the resize trace',
      async () => {
        const text = execFileSync(
          'node',
          ['packages/telemetry/dist/bin/trace-tail.js', '--file', stack.spansFile(), '--once', '--match', s.id],
          { cwd: join(__dirname, '../..'), encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 },
        );
        const block = text.split(/\n(?=trace )/).find((b) => b.includes('server_action') && b.includes(`compute.${dst}`));
        return block !== undefined && block.includes(`compute.${first}`) ? block : undefined;
      },
      30_000,
    );
    expect(out).toMatch(/instance_step_result/);
    expect(out).toContain('scheduler');
    console.log(`resize trace (trace-tail --match ${s.id}):\n${out.split('\n').slice(0, 60).join('\n')}`);
  } finally {
    await stack.setFaults({ steps: (before[0] as { steps?: unknown } | undefined)?.steps ?? {} });
  }
});
