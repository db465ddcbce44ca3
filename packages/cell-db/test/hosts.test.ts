import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  CELL_DB_MIGRATIONS_DIR,
  deleteComputeNode,
  deleteService,
  getComputeNode,
  getService,
  getServiceById,
  listComputeNodes,
  listHostChangesSplitSince,
  listHostRecordsChangedSince,
  listServices,
  listUnmappedComputeHosts,
  markComputeNodesMapped,
  recordServiceHeartbeat,
  recordServiceHeartbeats,
  listServicesChangedSince,
  setServiceDisabled,
  setServiceForcedDown,
  updateComputeNodeStats,
  updateComputeNodesStats,
  upsertComputeNode,
  upsertService,
  type ComputeNodeReport,
} from '@cellsched/cell-db';

/** Waits until the clock is past the current millisecond. */
const pastThisMillisecond = (): Promise<void> => new Promise((r) => setTimeout(r, 3));

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'celldb_hosts', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

const report = (host: string, serviceId: number | null, over: Partial<ComputeNodeReport> = {}): ComputeNodeReport => ({
  uuid: randomUUID(),
  serviceId,
  host,
  hypervisorHostname: host,
  vcpus: 16,
  memoryMb: 32768,
  localGb: 500,
  supportedInstances: [['x86_64', 'fake', 'hvm']],
  stats: { failed_builds: '0', io_workload: '0' },
  ...over,
});

describe('services', () => {
  it('upsert is idempotent per (host, binary) and keeps admin flags; heartbeats count', async () => {
    const first = await upsertService(db.pool, { host: 's1', binary: 'nova-compute', topic: 'compute', version: 1 });
    expect(first.created).toBe(true);
    expect(first.service).toMatchObject({ host: 's1', binary: 'nova-compute', reportCount: 0, disabled: false, lastSeenUp: null });
    await setServiceDisabled(db.pool, first.service.id, true, 'maintenance');
    const again = await upsertService(db.pool, { host: 's1', binary: 'nova-compute', topic: 'compute', version: 2 });
    expect(again.created).toBe(false);
    expect(again.service).toMatchObject({
      id: first.service.id,
      uuid: first.service.uuid,
      version: 2,
      disabled: true,
      disabledReason: 'maintenance',
    });
    expect(await recordServiceHeartbeat(db.pool, 's1', 'nova-compute')).toBe(true);
    expect(await recordServiceHeartbeat(db.pool, 's1', 'nova-compute')).toBe(true);
    expect(await recordServiceHeartbeat(db.pool, 'nobody', 'nova-compute')).toBe(false);
    const s = await getService(db.pool, 's1', 'nova-compute');
    expect(s?.reportCount).toBe(2);
    expect(s?.lastSeenUp).toBeInstanceOf(Date);
    expect((await setServiceDisabled(db.pool, first.service.id, false, 'ignored'))?.disabledReason).toBeNull();
    expect((await setServiceForcedDown(db.pool, first.service.id, true))?.forcedDown).toBe(true);
    expect((await getServiceById(db.pool, first.service.uuid))?.id).toBe(first.service.id);
    expect(await setServiceDisabled(db.pool, 999999, true)).toBeUndefined();
  });

  it('batch heartbeats report the unregistered hosts', async () => {
    await upsertService(db.pool, { host: 'b1', binary: 'nova-compute' });
    await upsertService(db.pool, { host: 'b2', binary: 'nova-compute' });
    expect(await recordServiceHeartbeats(db.pool, ['b1', 'b2', 'b3'], 'nova-compute')).toEqual(['b3']);
    expect(
      (await listServices(db.pool, { binary: 'nova-compute' })).filter((s) => s.host.startsWith('b')).map((s) => s.reportCount),
    ).toEqual([1, 1]);
    await expect(upsertService(db.pool, { host: '', binary: 'nova-compute' })).rejects.toMatchObject({ code: 'cell_db.service.invalid' });
  });
});

describe('compute nodes', () => {
  it('upsert by uuid is idempotent, keeps mapped, undeletes; stats merge', async () => {
    const { service } = await upsertService(db.pool, { host: 'c1', binary: 'nova-compute' });
    const input = report('c1', service.id);
    const first = await upsertComputeNode(db.pool, input);
    expect(first.created).toBe(true);
    expect(first.node).toMatchObject({
      uuid: input.uuid,
      host: 'c1',
      vcpus: 16,
      cpuAllocationRatio: 4,
      mapped: 0,
      supportedInstances: [['x86_64', 'fake', 'hvm']],
    });
    expect(await markComputeNodesMapped(db.pool, ['c1'])).toBe(1);
    const again = await upsertComputeNode(db.pool, { ...input, vcpusUsed: 2 });
    expect(again.created).toBe(false);
    expect(again.node).toMatchObject({ id: first.node.id, vcpusUsed: 2, mapped: 1 });
    expect(await updateComputeNodeStats(db.pool, input.uuid, { failed_builds: '3' })).toBe(true);
    expect((await getComputeNode(db.pool, input.uuid))?.stats).toEqual({ failed_builds: '3', io_workload: '0' });
    expect(await deleteComputeNode(db.pool, input.uuid)).toBe(true);
    expect(await deleteComputeNode(db.pool, input.uuid)).toBe(false);
    expect(await getComputeNode(db.pool, input.uuid)).toBeUndefined();
    expect((await upsertComputeNode(db.pool, input)).node.deletedAt).toBeNull();
    await expect(upsertComputeNode(db.pool, report('c1', service.id))).rejects.toMatchObject({ code: '23505' });
    await expect(upsertComputeNode(db.pool, report('c2', null, { vcpus: -1, ramAllocationRatio: 0 }))).rejects.toThrow(
      'invalid compute node: vcpus must be a non-negative integer; ram_allocation_ratio must be > 0',
    );
    expect(await updateComputeNodeStats(db.pool, randomUUID(), {})).toBe(false);
  });

  it('keeps the reported cpu_info; refuses one that is not a JSON object', async () => {
    const { service } = await upsertService(db.pool, { host: 'cpu1', binary: 'nova-compute' });
    const input = report('cpu1', service.id, { cpuInfo: '{"arch":"aarch64"}' });
    expect((await upsertComputeNode(db.pool, input)).node.cpuInfo).toBe('{"arch":"aarch64"}');
    expect((await upsertComputeNode(db.pool, report('cpu2', null))).node.cpuInfo).toBe('{}');
    await expect(upsertComputeNode(db.pool, report('cpu3', null, { cpuInfo: '[1]' }))).rejects.toThrow('cpu_info must be a JSON object');
  });

  it('periodic stats of many nodes in one statement: keys merged, running_vms set, unknown and deleted nodes skipped', async () => {
    const a = (await upsertComputeNode(db.pool, report('st1', null))).node;
    const b = (await upsertComputeNode(db.pool, report('st2', null))).node;
    await deleteComputeNode(db.pool, b.uuid);
    const n = await updateComputeNodesStats(db.pool, [
      { uuid: a.uuid, stats: { failed_builds: '2', num_instances: '5' }, runningVms: 5 },
      { uuid: b.uuid, stats: { failed_builds: '9' }, runningVms: 1 },
      { uuid: randomUUID(), stats: {}, runningVms: 0 },
    ]);
    expect(n).toBe(1);
    expect(await getComputeNode(db.pool, a.uuid)).toMatchObject({
      runningVms: 5,
      stats: { failed_builds: '2', io_workload: '0', num_instances: '5' },
    });
    expect((await getComputeNode(db.pool, b.uuid, { includeDeleted: true }))?.stats).toEqual({ failed_builds: '0', io_workload: '0' });
    // the same report again (a redelivery, or the compute's periodic report of every host) writes nothing
    const before = (await getComputeNode(db.pool, a.uuid))?.updatedAt;
    expect(await updateComputeNodesStats(db.pool, [{ uuid: a.uuid, stats: { failed_builds: '2' }, runningVms: 5 }])).toBe(0);
    expect((await getComputeNode(db.pool, a.uuid))?.updatedAt).toEqual(before);
    expect(await updateComputeNodesStats(db.pool, [{ uuid: a.uuid, stats: { failed_builds: '0' }, runningVms: 5 }])).toBe(1);
    await expect(updateComputeNodesStats(db.pool, [{ uuid: a.uuid, stats: {}, runningVms: -1 }])).rejects.toMatchObject({
      code: 'cell_db.compute_node.invalid',
    });
    expect(await updateComputeNodesStats(db.pool, [])).toBe(0);
  });

  it('unmapped hosts are listed until marked mapped', async () => {
    await upsertComputeNode(db.pool, report('u1', null));
    await upsertComputeNode(db.pool, report('u1', null, { hypervisorHostname: 'u1-node2' }));
    await upsertComputeNode(db.pool, report('u2', null));
    expect((await listUnmappedComputeHosts(db.pool)).filter((h) => h.startsWith('u'))).toEqual(['u1', 'u2']);
    expect(await markComputeNodesMapped(db.pool, ['u1'])).toBe(2);
    expect((await listUnmappedComputeHosts(db.pool)).filter((h) => h.startsWith('u'))).toEqual(['u2']);
    expect((await listComputeNodes(db.pool, { host: 'u1' })).map((n) => n.hypervisorHostname)).toEqual(['u1', 'u1-node2']);
  });

  it('deleting a service soft-deletes its nodes', async () => {
    const { service } = await upsertService(db.pool, { host: 'd1', binary: 'nova-compute' });
    const n = await upsertComputeNode(db.pool, report('d1', service.id));
    expect(await deleteService(db.pool, service.id)).toBe(true);
    expect(await deleteService(db.pool, service.id)).toBe(false);
    expect(await getComputeNode(db.pool, n.node.uuid)).toBeUndefined();
  });
});

describe('incremental host cache reads', () => {
  it('initial load, then only what changed: node updates, heartbeats, deletions', async () => {
    const cellDb = await createTestDatabase({ prefix: 'celldb_chg', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
    try {
      const pool = cellDb.pool;
      const s1 = (await upsertService(pool, { host: 'h1', binary: 'nova-compute' })).service;
      const s2 = (await upsertService(pool, { host: 'h2', binary: 'nova-compute' })).service;
      const n1 = (await upsertComputeNode(pool, report('h1', s1.id))).node;
      const n2 = (await upsertComputeNode(pool, report('h2', s2.id))).node;
      await pastThisMillisecond(); // the watermark is a Date (ms): a write in the read's own millisecond would be read again
      const initial = await listHostRecordsChangedSince(pool, undefined, { overlapMs: 0 });
      expect(initial.hosts.map((h) => [h.node.uuid, h.service?.host])).toEqual([
        [n1.uuid, 'h1'],
        [n2.uuid, 'h2'],
      ]);
      expect(initial.hosts[0]?.service?.lastSeenUp).toBeNull();

      const nothing = await listHostRecordsChangedSince(pool, initial.nextSince, { overlapMs: 0 });
      expect(nothing.hosts).toEqual([]);
      expect(nothing.nextSince.getTime()).toBeGreaterThanOrEqual(initial.nextSince.getTime());

      await recordServiceHeartbeat(pool, 'h2', 'nova-compute');
      await pastThisMillisecond(); // the watermark is a Date (ms): a write in the read's own millisecond would be read again
      const beat = await listHostRecordsChangedSince(pool, nothing.nextSince, { overlapMs: 0 });
      expect(beat.hosts.map((h) => h.node.uuid)).toEqual([n2.uuid]);
      expect(beat.hosts[0]?.service?.reportCount).toBe(1);
      expect(beat.hosts[0]?.service?.lastSeenUp).toBeInstanceOf(Date);

      await deleteComputeNode(pool, n1.uuid);
      await pastThisMillisecond(); // the watermark is a Date (ms): a write in the read's own millisecond would be read again
      const gone = await listHostRecordsChangedSince(pool, beat.nextSince, { overlapMs: 0 });
      expect(gone.hosts.map((h) => [h.node.uuid, h.node.deletedAt !== null])).toEqual([[n1.uuid, true]]);

      // With the default overlap the same changes are seen again (merge by uuid), never missed.
      const overlapped = await listHostRecordsChangedSince(pool, initial.nextSince);
      expect(overlapped.hosts.map((h) => h.node.uuid).sort()).toEqual([n1.uuid, n2.uuid].sort());
      expect(overlapped.nextSince.getTime()).toBe(initial.nextSince.getTime());
      await expect(listHostRecordsChangedSince(pool, undefined, { overlapMs: -1 })).rejects.toMatchObject({ code: 'cell_db.invalid' });
    } finally {
      await cellDb.drop();
    }
  });
});

describe('incremental host reads split by what changed', () => {
  it('node rows with their service, and service rows alone (heartbeats, disable, delete)', async () => {
    const cellDb = await createTestDatabase({ prefix: 'celldb_split', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
    try {
      const pool = cellDb.pool;
      const s1 = (await upsertService(pool, { host: 'h1', binary: 'nova-compute' })).service;
      const s2 = (await upsertService(pool, { host: 'h2', binary: 'nova-compute' })).service;
      const n1 = (await upsertComputeNode(pool, report('h1', s1.id))).node;
      await upsertComputeNode(pool, report('h2', s2.id));
      await pastThisMillisecond(); // the watermark is a Date (ms): a write in the read's own millisecond would be read again
      const initial = await listHostRecordsChangedSince(pool, undefined, { overlapMs: 0 });

      const nothing = await listHostChangesSplitSince(pool, initial.nextSince, { overlapMs: 0 });
      expect([nothing.hosts, nothing.services]).toEqual([[], []]);

      await recordServiceHeartbeat(pool, 'h2', 'nova-compute');
      await setServiceDisabled(pool, s1.id, true, 'maint');
      await pastThisMillisecond(); // the watermark is a Date (ms): a write in the read's own millisecond would be read again
      const beat = await listHostChangesSplitSince(pool, nothing.nextSince, { overlapMs: 0 });
      expect(beat.hosts).toEqual([]);
      expect(beat.services.map((s) => [s.id, s.reportCount, s.disabled])).toEqual([
        [s1.id, 0, true],
        [s2.id, 1, false],
      ]);

      await updateComputeNodeStats(pool, n1.uuid, { io_workload: '3' });
      await deleteService(pool, s2.id); // deletes its node too
      await pastThisMillisecond(); // the watermark is a Date (ms): a write in the read's own millisecond would be read again
      const later = await listHostChangesSplitSince(pool, beat.nextSince, { overlapMs: 0 });
      expect(later.hosts.map((h) => [h.node.host, h.node.deletedAt !== null, h.service?.disabled])).toEqual([
        ['h1', false, true],
        ['h2', true, undefined],
      ]);
      expect(later.services.map((s) => [s.id, s.deletedAt !== null])).toEqual([[s2.id, true]]);
      await expect(listHostChangesSplitSince(pool, later.nextSince, { overlapMs: -1 })).rejects.toMatchObject({ code: 'cell_db.invalid' });
      await expect(listHostChangesSplitSince(pool, later.nextSince, { pageSize: 0 })).rejects.toMatchObject({ code: 'cell_db.invalid' });

      // page by page: every changed service row once, in id order, whatever the page size
      const more = await Promise.all(
        ['h3', 'h4', 'h5'].map(async (host) => (await upsertService(pool, { host, binary: 'nova-compute' })).service.id),
      );
      await recordServiceHeartbeat(pool, 'h1', 'nova-compute');
      for (const pageSize of [1, 2, 3, 100]) {
        const paged = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, pageSize });
        expect(paged.services.map((s) => s.id)).toEqual([s1.id, ...more].sort((x, y) => x - y));
        expect(paged.services[0]).toMatchObject({
          id: s1.id,
          reportCount: 1,
          disabled: true,
          lastSeenUp: expect.any(Date),
          deletedAt: null,
        });
      }

      // rows the reader holds (as serviceVersions gave them) are listed, not read again; a row changed since is
      const first = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, known: new Map(), pageSize: 2 });
      expect(first.services.map((s) => s.id)).toEqual([s1.id, ...more].sort((x, y) => x - y));
      expect(first.serviceVersions.map(([id]) => id)).toEqual(first.services.map((s) => s.id));
      const held = new Map(first.serviceVersions);
      const same = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, known: held, pageSize: 2 });
      expect(same.services).toEqual([]);
      expect(same.serviceVersions).toEqual(first.serviceVersions);
      expect(same.heartbeats).toEqual([]);
      // a held row changed by a heartbeat only: its liveness, not the row
      const seenBefore = first.services.find((s) => s.id === s1.id)?.lastSeenUp?.getTime() ?? 0;
      await pastThisMillisecond();
      await recordServiceHeartbeat(pool, 'h1', 'nova-compute');
      const beatAgain = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, known: held, pageSize: 2 });
      expect(beatAgain.services).toEqual([]);
      expect(beatAgain.heartbeats.map((b) => [b.id, (b.lastSeenUp?.getTime() ?? 0) > seenBefore])).toEqual([[s1.id, true]]);
      // a held row whose state changed (enabled again) is read whole, whatever else changed
      await setServiceDisabled(pool, s1.id, false);
      const enabled = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, known: held, pageSize: 2 });
      expect(enabled.services.map((s) => [s.id, s.reportCount, s.disabled])).toEqual([[s1.id, 2, false]]);
      expect(enabled.heartbeats).toEqual([]);

      // node rows the reader holds (as nodeVersions gave them) are listed, not read again; a node changed since is
      await updateComputeNodeStats(pool, n1.uuid, { io_workload: '4' });
      const n3 = (await upsertComputeNode(pool, report('h3', more[0] ?? null))).node;
      const nodesFirst = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, knownNodes: new Map() });
      expect(nodesFirst.hosts.map((h) => h.node.host)).toEqual(['h1', 'h3']);
      expect(nodesFirst.nodeVersions.map(([id]) => id)).toEqual(nodesFirst.hosts.map((h) => h.node.id));
      const nodesHeld = new Map(nodesFirst.nodeVersions);
      const nodesSame = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, knownNodes: nodesHeld });
      expect(nodesSame.hosts).toEqual([]);
      expect(nodesSame.nodeVersions).toEqual(nodesFirst.nodeVersions);
      await updateComputeNodeStats(pool, n3.uuid, { io_workload: '1' });
      const nodesChanged = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0, knownNodes: nodesHeld });
      expect(nodesChanged.hosts.map((h) => [h.node.host, h.node.stats.io_workload])).toEqual([['h3', '1']]);
      // without knownNodes every changed node is read, as before
      const nodesAll = await listHostChangesSplitSince(pool, later.nextSince, { overlapMs: 0 });
      expect(nodesAll.hosts.map((h) => h.node.host)).toEqual(['h1', 'h3']);
    } finally {
      await cellDb.drop();
    }
  });
});

describe('incremental service reads', () => {
  it('initial load of live services, then only the changed ones, deletions included', async () => {
    const cellDb = await createTestDatabase({ prefix: 'celldb_svc', kind: 'cell', migrationsDir: CELL_DB_MIGRATIONS_DIR });
    try {
      const a = (await upsertService(cellDb.pool, { host: 'a', binary: 'nova-compute' })).service;
      const b = (await upsertService(cellDb.pool, { host: 'b', binary: 'nova-compute' })).service;
      const first = await listServicesChangedSince(cellDb.pool, undefined, { overlapMs: 0 });
      expect(first.services.map((s) => s.host)).toEqual(['a', 'b']);
      await setServiceDisabled(cellDb.pool, b.id, true, 'maint');
      await deleteService(cellDb.pool, a.id);
      const next = await listServicesChangedSince(cellDb.pool, first.nextSince, { overlapMs: 0 });
      expect(next.services.map((s) => [s.host, s.disabled, s.deletedAt !== null])).toEqual([
        ['a', false, true],
        ['b', true, false],
      ]);
      expect((await listServicesChangedSince(cellDb.pool, next.nextSince, { overlapMs: 0 })).services).toEqual([]);
    } finally {
      await cellDb.drop();
    }
  });
});
