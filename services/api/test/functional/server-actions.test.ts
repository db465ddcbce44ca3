// POST /servers/{id}/action (issue 13) against real PostgreSQL (API DB, cells) and a real
// RabbitMQ vhost where a fake super-conductor records the server_action casts: Nova's state
// checks and errors, the intent recorded in the API DB and shown at once by the server view,
// one cast per accepted action, and the sweeper that re-casts lost casts.
import { randomUUID } from 'node:crypto';
import { getServerTaskIntent, setInstanceMappingCell } from '@cellsched/api-db';
import {
  createInstance,
  createMigration,
  recordServiceHeartbeat,
  upsertComputeNode,
  upsertService,
  type VmStateName,
} from '@cellsched/cell-db';
import { ServerActionSweeper } from '../../src/adapters/server-action-sweeper';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
const SMALL = { id: 0, flavorid: '2', name: 'm1.small', vcpus: 1, memoryMb: 2048, rootGb: 20, ephemeralGb: 0, swap: 0, extraSpecs: {} };

beforeAll(async () => {
  h = await startHarness('actions');
  for (const host of ['host-a', 'host-b', 'host-dead']) {
    const { service } = await upsertService(h.cell1.pool, { host, binary: 'nova-compute', topic: 'compute' });
    await upsertComputeNode(h.cell1.pool, {
      uuid: randomUUID(),
      serviceId: service.id,
      host,
      hypervisorHostname: host,
      vcpus: 8,
      memoryMb: 16384,
      localGb: 100,
    });
    await recordServiceHeartbeat(h.cell1.pool, host, 'nova-compute', host === 'host-dead' ? new Date(Date.now() - 3_600_000) : undefined);
  }
}, 120_000);
afterAll(async () => {
  await h?.close();
});

/** A server in cell1 as the super-conductor and a compute would have left it (test-only cell writes). */
async function server(vmState: VmStateName, o: { host?: string | null; taskState?: string; project?: string } = {}): Promise<string> {
  const project = o.project ?? 'p1';
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as(`alice:${project}`),
    payload: { server: { name: 'vm', imageRef: IMAGE, flavorRef: '2' } },
  });
  const id = (res.json() as { server: { id: string } }).server.id;
  const host = o.host === undefined ? 'host-a' : o.host;
  await createInstance(h.cell1.pool, {
    uuid: id,
    projectId: project,
    userId: 'alice',
    displayName: 'vm',
    flavor: SMALL,
    imageRef: IMAGE,
    vmState,
    taskState: o.taskState,
    host,
    node: host,
    availabilityZone: 'nova',
  });
  await h.cell1.pool.query('UPDATE instances SET launched_at = now() WHERE uuid = $1', [id]);
  await setInstanceMappingCell(h.apiDb.pool, id, h.cells.cell1.id);
  await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [id]);
  return id;
}

const act = (id: string, body: unknown, token = 'alice:p1', version = '2.60'): ReturnType<Harness['inject']> =>
  h.inject({ method: 'POST', url: `/v2.1/servers/${id}/action`, headers: as(token, version), payload: body });
const show = async (id: string, token = 'admin'): Promise<Record<string, unknown>> =>
  ((await h.inject({ url: `/v2.1/servers/${id}`, headers: as(token, '2.60') })).json() as { server: Record<string, unknown> }).server;
const castFor = (id: string, action: string) =>
  waitFor(`${action} cast`, () => h.seen.actions.find((a) => a.instanceUuid === id && a.action === action));
const conflict = (message: string): unknown => ({ conflictingRequest: { code: 409, message } });
const bad = (message: string): unknown => ({ badRequest: { code: 400, message } });

describe('lifecycle actions', () => {
  it("os-stop: 202, intent recorded and shown at once, one cast; a second action is Nova's 409", async () => {
    const id = await server('active');
    const res = await act(id, { 'os-stop': null });
    expect([res.statusCode, res.body]).toEqual([202, '']);
    const intent = await getServerTaskIntent(h.apiDb.pool, id);
    expect(intent).toMatchObject({ action: 'stop', taskState: 'powering-off' });
    const cast = await castFor(id, 'stop');
    expect(cast).toMatchObject({
      cellUuid: h.cells.cell1.uuid,
      taskState: 'powering-off',
      userId: 'alice',
      projectId: 'p1',
      requestId: intent?.requestId,
    });
    expect(await show(id)).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': 'powering-off', 'OS-EXT-STS:vm_state': 'active' });
    expect((await act(id, { 'os-stop': null })).json()).toEqual(
      conflict(`Cannot 'stop' instance ${id} while it is in task_state powering-off`),
    );
    expect((await act(id, { reboot: { type: 'SOFT' } })).json()).toEqual(
      conflict(`Cannot 'reboot' instance ${id} while it is in task_state powering-off`),
    );
    expect(h.seen.actions.filter((a) => a.instanceUuid === id)).toHaveLength(1);
  });

  it("refuses by vm_state, hides other projects' servers, and a server without a host is not ready", async () => {
    const id = await server('active');
    expect((await act(id, { 'os-start': null })).json()).toEqual(conflict(`Cannot 'start' instance ${id} while it is in vm_state active`));
    expect((await act(id, { 'os-stop': null }, 'mallory:p9')).statusCode).toBe(404);
    const hostless = await server('error', { host: null });
    expect((await act(hostless, { 'os-stop': null })).json()).toEqual(conflict(`Instance ${hostless} is not ready`));
    const building = (
      await h.inject({
        method: 'POST',
        url: '/v2.1/servers',
        headers: as('alice:p1'),
        payload: { server: { name: 'b', imageRef: IMAGE, flavorRef: '1' } },
      })
    ).json() as { server: { id: string } };
    expect((await act(building.server.id, { reboot: { type: 'HARD' } })).json()).toEqual(
      conflict(`Cannot 'reboot' instance ${building.server.id} while it is in vm_state building`),
    );
    expect(await getServerTaskIntent(h.apiDb.pool, id)).toBeUndefined();
  });

  it('reboot HARD shows HARD_REBOOT; an unknown action and a bad body are 400s that record nothing', async () => {
    const id = await server('stopped');
    expect((await act(id, { reboot: { type: 'soft' } })).json()).toEqual(
      conflict(`Cannot 'reboot' instance ${id} while it is in vm_state stopped`),
    );
    expect((await act(id, { reboot: { type: 'HARD' } })).statusCode).toBe(202);
    expect((await castFor(id, 'reboot')).rebootType).toBe('HARD');
    expect(await show(id)).toMatchObject({ status: 'SHUTOFF', 'OS-EXT-STS:task_state': 'rebooting_hard' });
    const other = await server('active');
    expect((await act(other, { reboot: { type: 'HARD' } })).statusCode).toBe(202);
    expect((await show(other)).status).toBe('HARD_REBOOT');
    expect((await act(other, { pause: null })).json()).toEqual(bad('There is no such action: pause'));
    const fresh = await server('active');
    expect((await act(fresh, { reboot: {} })).statusCode).toBe(400);
    expect(await getServerTaskIntent(h.apiDb.pool, fresh)).toBeUndefined();
  });

  it("rebuild: 202 with the server (REBUILD, adminPass, Location); an unknown image is Nova's 400", async () => {
    const id = await server('active');
    expect((await act(id, { rebuild: { imageRef: randomUUID() } })).json()).toEqual(bad('Cannot find image for rebuild'));
    const res = await act(id, { rebuild: { imageRef: IMAGE, name: 'renamed', adminPass: 'pw' } });
    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toBe(`${h.base}/v2.1/servers/${id}`);
    const body = (res.json() as { server: Record<string, unknown> }).server;
    expect(body).toMatchObject({ id, name: 'renamed', status: 'REBUILD', adminPass: 'pw', user_data: null, image: { id: IMAGE } });
    expect(body['OS-EXT-STS:task_state']).toBeUndefined();
    expect(await castFor(id, 'rebuild')).toMatchObject({ imageRef: IMAGE, displayName: 'renamed', taskState: 'rebuilding' });
    expect(await show(id)).toMatchObject({ name: 'renamed', status: 'REBUILD' });
  });

  it('shelve, shelveOffload (admin, only from SHELVED) and unshelve', async () => {
    const id = await server('active');
    expect((await act(id, { shelveOffload: null })).json()).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-shelve:shelve_offload to be performed." },
    });
    expect((await act(id, { shelveOffload: null }, 'admin')).json()).toEqual(
      conflict(`Cannot 'shelveOffload' instance ${id} while it is in vm_state active`),
    );
    expect((await act(id, { shelve: null })).statusCode).toBe(202);
    expect((await castFor(id, 'shelve')).taskState).toBe('shelving');
    const offloaded = await server('shelved_offloaded', { host: null });
    expect((await act(offloaded, { unshelve: null })).statusCode).toBe(202);
    expect(await show(offloaded)).toMatchObject({ status: 'SHELVED_OFFLOADED', 'OS-EXT-STS:task_state': 'unshelving' });
  });
});

describe('moves', () => {
  it("resize: Nova's flavor checks, then RESIZE with the new flavor in the cast", async () => {
    const id = await server('active');
    expect((await act(id, { resize: { flavorRef: '2' } })).json()).toEqual(bad('When resizing, instances must change flavor!'));
    expect((await act(id, { resize: { flavorRef: '999' } })).json()).toEqual(bad('Flavor 999 could not be found.'));
    expect((await act(id, { resize: { flavorRef: 3 } })).statusCode).toBe(202);
    expect((await castFor(id, 'resize')).flavor).toMatchObject({ flavorid: '3', name: 'm1.medium', vcpus: 2 });
    expect(await show(id)).toMatchObject({
      status: 'RESIZE',
      'OS-EXT-STS:task_state': 'resize_prep',
      flavor: { original_name: 'm1.small' },
    });
    const dead = await server('active', { host: 'host-dead' });
    expect((await act(dead, { resize: { flavorRef: '3' } })).json()).toEqual(conflict('Service is unavailable at this time.'));
  });

  it('migrate is admin only; host from 2.56 (not the source, a known compute host), ignored before', async () => {
    const id = await server('active');
    expect((await act(id, { migrate: null })).statusCode).toBe(403);
    expect((await act(id, { migrate: { host: 'host-a' } }, 'admin')).json()).toEqual(
      bad('Cannot migrate to the host where the server exists.'),
    );
    expect((await act(id, { migrate: { host: 'nope' } }, 'admin')).json()).toEqual(bad('Compute host nope could not be found.'));
    expect((await act(id, { migrate: { host: 'host-b' } }, 'admin', '2.55')).statusCode).toBe(202);
    expect((await castFor(id, 'migrate')).host).toBe('');
    const other = await server('stopped');
    expect((await act(other, { migrate: { host: 'host-b' } }, 'admin')).statusCode).toBe(202);
    expect(await castFor(other, 'migrate')).toMatchObject({ host: 'host-b', taskState: 'resize_prep' });
  });

  it('os-migrateLive: MIGRATING, host checked, block_migration carried', async () => {
    const id = await server('active');
    const body = (host: string | null): unknown => ({ 'os-migrateLive': { host, block_migration: 'auto' } });
    expect((await act(id, body('nope'), 'admin')).json()).toEqual(bad('Compute host nope could not be found.'));
    expect((await act(id, body('host-b'), 'admin')).statusCode).toBe(202);
    expect(await castFor(id, 'live-migration')).toMatchObject({ host: 'host-b', blockMigration: 'auto' });
    expect((await show(id)).status).toBe('MIGRATING');
    const stopped = await server('stopped');
    expect((await act(stopped, body(null), 'admin')).json()).toEqual(
      conflict(`Cannot 'os-migrateLive' instance ${stopped} while it is in vm_state stopped`),
    );
  });

  it('confirmResize (204) and revertResize need a finished migration; a pending confirm is "not resized"', async () => {
    const id = await server('resized', { host: 'host-b' });
    expect((await act(id, { confirmResize: null })).json()).toEqual(bad('Instance has not been resized.'));
    await createMigration(h.cell1.pool, {
      instanceUuid: id,
      migrationType: 'resize',
      status: 'finished',
      sourceCompute: 'host-a',
      sourceNode: 'host-a',
      destCompute: 'host-b',
      destNode: 'host-b',
    });
    const res = await act(id, { confirmResize: null });
    expect([res.statusCode, res.body]).toEqual([204, '']);
    expect(await getServerTaskIntent(h.apiDb.pool, id)).toMatchObject({ action: 'confirmResize', taskState: null });
    expect((await castFor(id, 'confirmResize')).taskState).toBe('');
    expect((await show(id)).status).toBe('VERIFY_RESIZE');
    expect((await act(id, { revertResize: null })).json()).toEqual(bad('Instance has not been resized.'));
    const other = await server('resized', { host: 'host-b' });
    await createMigration(h.cell1.pool, {
      instanceUuid: other,
      migrationType: 'migration',
      status: 'finished',
      sourceCompute: 'host-a',
      sourceNode: 'host-a',
      destCompute: 'host-b',
      destNode: 'host-b',
    });
    expect((await act(other, { revertResize: null })).statusCode).toBe(202);
    expect((await show(other)).status).toBe('REVERT_RESIZE');
  });

  it('evacuate: admin only, refused while the source is up, 200 (no body from 2.14, adminPass before)', async () => {
    const up = await server('active');
    expect((await act(up, { evacuate: {} }, 'admin')).json()).toEqual(bad('Compute service of host-a is still in use.'));
    expect((await act(up, { evacuate: { host: 'nope' } }, 'admin')).json()).toEqual({
      itemNotFound: { code: 404, message: 'Compute host nope not found.' },
    });
    expect((await act(up, { evacuate: { host: 'host-a' } }, 'admin')).json()).toEqual(bad("The target host can't be the same one."));
    const id = await server('active', { host: 'host-dead' });
    const res = await act(id, { evacuate: {} }, 'admin');
    expect([res.statusCode, res.body]).toEqual([200, '']);
    expect(await castFor(id, 'evacuate')).toMatchObject({ taskState: 'rebuilding', host: '' });
    expect((await show(id)).status).toBe('REBUILD');
    const old = await server('stopped', { host: 'host-dead' });
    const legacy = await act(old, { evacuate: { onSharedStorage: false, host: 'host-b' } }, 'admin', '2.13');
    expect(legacy.statusCode).toBe(200);
    expect((legacy.json() as { adminPass: string }).adminPass).toMatch(/^[a-zA-Z0-9]{12}$/);
    expect((await castFor(old, 'evacuate')).host).toBe('host-b');
  });
});

describe('the server action sweeper', () => {
  it('re-casts an intent whose cast may be lost, once per period, then gives it up at its expiry', async () => {
    const id = await server('active');
    expect((await act(id, { 'os-stop': null })).statusCode).toBe(202);
    const first = await castFor(id, 'stop');
    const sweeper = new ServerActionSweeper(h.deps, { minAgeMs: 30_000, recastEveryMs: 30_000, expireAfterMs: 600_000 });
    const now = Date.now();
    expect((await sweeper.sweep(now)).recast).not.toContain(id);
    expect((await sweeper.sweep(now + 31_000)).recast).toContain(id);
    const again = await waitFor('the re-cast', () => h.seen.actions.filter((a) => a.instanceUuid === id)[1]);
    expect(again).toEqual(first);
    expect((await sweeper.sweep(now + 32_000)).recast).not.toContain(id);
    expect((await sweeper.sweep(now + 700_000)).expired).toContain(id);
    // the super-conductor is told (it records the action as never taken up), then the intent goes
    const given = await waitFor('the expiry cast', () => h.seen.actions.filter((a) => a.instanceUuid === id)[2]);
    expect(given).toEqual({ ...first, expiredAfterS: 600 });
    expect(await getServerTaskIntent(h.apiDb.pool, id)).toBeUndefined();
    expect((await show(id))['OS-EXT-STS:task_state']).toBeNull();
  });

  it('keeps an expired intent when the super-conductor cannot be told (the next sweep tries again)', async () => {
    const id = await server('active');
    expect((await act(id, { 'os-stop': null })).statusCode).toBe(202);
    const conductor = {
      serverAction: async () => {
        throw new Error('broker down');
      },
    } as unknown as typeof h.deps.conductor;
    const failing = { ...h.deps, conductor };
    const sweeper = new ServerActionSweeper(failing, { minAgeMs: 30_000, recastEveryMs: 30_000, expireAfterMs: 600_000 });
    expect((await sweeper.sweep(Date.now() + 700_000)).expired).toEqual([]);
    expect(await getServerTaskIntent(h.apiDb.pool, id)).toMatchObject({ action: 'stop' });
    expect((await show(id))['OS-EXT-STS:task_state']).toBe('powering-off');
    const working = new ServerActionSweeper(h.deps, { minAgeMs: 30_000, recastEveryMs: 30_000, expireAfterMs: 600_000 });
    expect((await working.sweep(Date.now() + 700_000)).expired).toContain(id);
  });

  it('clears the intent of a server that is gone', async () => {
    const id = await server('active');
    expect((await act(id, { 'os-stop': null })).statusCode).toBe(202);
    await h.apiDb.pool.query('DELETE FROM instance_mappings WHERE instance_uuid = $1', [id]);
    const sweeper = new ServerActionSweeper(h.deps, { minAgeMs: 30_000, recastEveryMs: 30_000, expireAfterMs: 600_000 });
    expect((await sweeper.sweep(Date.now() + 31_000)).cleared).toContain(id);
    expect(await getServerTaskIntent(h.apiDb.pool, id)).toBeUndefined();
  });
});
