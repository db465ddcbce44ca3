import type { InstanceGroup, RequestSpec, Selection } from '@cellsched/wire';
import { fakeCloud } from '../../test/support/fake-cloud';
import { flavor, spec } from '../../test/support/fixtures';
import { InvalidSchedulerRequest } from './errors';
import { DEFAULT_POLICY, type SchedulerPolicy } from './policy';
import { SchedulerCore, type SelectDestinationsResult } from './select-destinations';
import type { MoveContext } from './select/validate-request';

const SMALL = flavor({ vcpus: 1, memoryMb: 1024, rootGb: 10 });
const SMALL_ALLOC = { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 };
const MIG = 'mig-1';

type Cloud = ReturnType<typeof fakeCloud>;

/** The instance `vm` running on `cn-c1-001` (host-c1-1) of cell-1, as the moves below find it. */
function cloudWithInstance(cells = 2, hostsPerCell = 4, inventory?: Record<string, number>): Cloud {
  const cloud = fakeCloud(cells, hostsPerCell, inventory);
  cloud.placement.setAllocation('vm', { 'cn-c1-001': SMALL_ALLOC });
  return cloud;
}

function core(cloud: Cloud, policy: Partial<SchedulerPolicy> = {}): SchedulerCore {
  return new SchedulerCore(cloud.ports, { ...DEFAULT_POLICY, hostSubsetSize: 4, ...policy });
}

function move(overrides: Partial<MoveContext> = {}): MoveContext {
  return { migrationUuid: MIG, sourceHost: 'host-c1-1', sourceNode: 'node-c1-1', allowSameHost: false, ...overrides };
}

/** A move of `vm` restricted to cell-1 (as the super-conductor asks), `numAlternates` 2. */
function selectMove(
  c: SchedulerCore,
  s: Partial<RequestSpec> = {},
  m: Partial<MoveContext> = {},
  numAlternates = 2,
): Promise<SelectDestinationsResult> {
  return c.selectDestinations({
    spec: spec({
      flavor: SMALL,
      requestedDestination: { host: '', node: '', cellUuid: 'cell-1', aggregates: [], allowCrossCellMove: false },
      ...s,
    }),
    instanceUuids: ['vm'],
    numAlternates,
    allocationRequestVersion: '1.36',
    move: move(m),
  });
}

function selected(r: SelectDestinationsResult): Selection[] {
  if (r.kind !== 'selected') throw new Error(`expected a selection, got NoValidHost: ${r.reason} ${JSON.stringify(r.diagnosis)}`);
  return r.destinations[0] ?? [];
}

/** provider -> resources a consumer holds, as a plain object. */
function held(cloud: Cloud, consumer: string): Record<string, Record<string, number>> | undefined {
  const m = cloud.placement.allocations.get(consumer);
  return m === undefined ? undefined : Object.fromEntries(m);
}

describe('select_destinations for a move', () => {
  it('claims the destination with a move claim: the source goes to the migration, the instance holds the destination', async () => {
    const cloud = cloudWithInstance();
    const [chosen, ...alternates] = selected(await selectMove(core(cloud)));
    expect(chosen?.serviceHost).not.toBe('host-c1-1');
    expect(chosen?.cellUuid).toBe('cell-1');
    expect(held(cloud, MIG)).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    expect(held(cloud, 'vm')).toEqual({ [chosen?.computeNodeUuid ?? '']: SMALL_ALLOC });
    expect(cloud.placement.moveClaims).toEqual([['vm', MIG]]);
    expect(cloud.placement.stats.claims).toBe(1);
    // alternates: same cell, never the source nor the chosen host, unclaimed
    expect(alternates).toHaveLength(2);
    for (const a of alternates) {
      expect(a.cellUuid).toBe('cell-1');
      expect([chosen?.serviceHost, 'host-c1-1']).not.toContain(a.serviceHost);
      expect(cloud.placement.allocations.has(a.computeNodeUuid)).toBe(false);
    }
    expect(cloud.placement.overCapacity()).toEqual([]);
  });

  it("stays in the instance's cell and never picks the source, whatever the seed", async () => {
    for (let seed = 1; seed <= 12; seed += 1) {
      const cloud = cloudWithInstance(3, 3);
      const list = selected(await selectMove(core(cloud), { seed }));
      for (const s of list) {
        expect(s.cellUuid).toBe('cell-1');
        expect(s.serviceHost).not.toBe('host-c1-1');
      }
    }
  });

  it('excludes the source through ignore_hosts (the diagnosis says so) and answers NoValidHost when the source is the only host', async () => {
    const cloud = cloudWithInstance(2, 1);
    const r = await selectMove(core(cloud));
    expect(r.kind).toBe('no_valid_host');
    if (r.kind !== 'no_valid_host') return;
    expect(r.diagnosis).toContainEqual({
      filter: 'ignore_hosts',
      hostsBefore: 2,
      hostsAfter: 1,
      reason: "host is in the request's ignore_hosts (1 host)",
    });
    expect(r.diagnosis).toContainEqual(expect.objectContaining({ filter: 'requested_destination', hostsBefore: 1, hostsAfter: 0 }));
  });

  it('with allow_same_host (resize to the same host) the source may be chosen', async () => {
    const cloud = cloudWithInstance(1, 1);
    const [chosen] = selected(await selectMove(core(cloud), {}, { allowSameHost: true }));
    expect(chosen?.serviceHost).toBe('host-c1-1');
    expect(held(cloud, MIG)).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    expect(held(cloud, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    expect(cloud.placement.used('cn-c1-001', 'MEMORY_MB')).toBe(2048); // Nova's doubled allocation on the same host
  });

  it('a requested host is the only candidate (migrate / live migrate with a host): no alternates', async () => {
    const cloud = cloudWithInstance();
    const list = selected(
      await selectMove(core(cloud), {
        requestedDestination: { host: 'host-c1-3', node: '', cellUuid: 'cell-1', aggregates: [], allowCrossCellMove: false },
      }),
    );
    expect(list.map((s) => s.serviceHost)).toEqual(['host-c1-3']);
    expect(held(cloud, 'vm')).toEqual({ 'cn-c1-003': SMALL_ALLOC });
  });

  it("a requested host outside the instance's cell is NoValidHost, and the instance keeps its source", async () => {
    const cloud = cloudWithInstance();
    const r = await selectMove(core(cloud), {
      requestedDestination: { host: 'host-c2-1', node: '', cellUuid: 'cell-1', aggregates: [], allowCrossCellMove: false },
    });
    expect(r.kind).toBe('no_valid_host');
    expect(held(cloud, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    expect(held(cloud, MIG)).toBeUndefined();
  });

  it('NoValidHost reverts the move (never a release: that would drop the source)', async () => {
    const cloud = cloudWithInstance(1, 3);
    const r = await selectMove(core(cloud), { flavor: flavor({ vcpus: 64, memoryMb: 1024, rootGb: 10 }) });
    expect(r.kind).toBe('no_valid_host');
    expect(cloud.placement.releaseLog).toEqual([]);
    expect(cloud.placement.reverts).toEqual([['vm', MIG]]);
    expect(held(cloud, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
  });

  it('a retried move replaces the destination only: the migration keeps the source, nothing doubles', async () => {
    const cloud = cloudWithInstance(1, 4);
    const first = selected(await selectMove(core(cloud), { seed: 1 }))[0];
    const second = selected(await selectMove(core(cloud), { seed: 2 }))[0];
    expect(held(cloud, MIG)).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    expect(held(cloud, 'vm')).toEqual({ [second?.computeNodeUuid ?? '']: SMALL_ALLOC });
    const totalRam = [...cloud.placement.providers.keys()].reduce((n, rp) => n + cloud.placement.used(rp, 'MEMORY_MB'), 0);
    expect(totalRam).toBe(2 * 1024);
    expect(first).toBeDefined();
  });

  it('a retried move that now gets NoValidHost puts the instance back on its source', async () => {
    const cloud = cloudWithInstance(1, 2, { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 });
    expect(selected(await selectMove(core(cloud)))[0]?.serviceHost).toBe('host-c1-2');
    // the cloud is full now (placement's candidates do not discount the instance's own claim)
    const r = await selectMove(core(cloud));
    expect(r.kind).toBe('no_valid_host');
    expect(held(cloud, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    expect(held(cloud, MIG)).toBeUndefined();
    expect(cloud.placement.overCapacity()).toEqual([]);
  });

  it('retries a conflicting destination and moves on when it has no capacity, with move claims throughout', async () => {
    const cloud = cloudWithInstance(1, 3);
    cloud.placement.forcedConflicts.set('cn-c1-002', 2);
    cloud.placement.forcedConflicts.set('cn-c1-003', 2);
    const r = await selectMove(core(cloud), {}, {}, 0);
    expect(selected(r)).toHaveLength(1);
    expect(r.claimRetries).toBe(2);
    expect(cloud.placement.moveClaims.every(([i, m]) => i === 'vm' && m === MIG)).toBe(true);

    const full = cloudWithInstance(1, 3, { VCPU: 2, MEMORY_MB: 2048, DISK_GB: 20 });
    const read = full.snapshot.getAllocationCandidates.bind(full.snapshot);
    full.snapshot.getAllocationCandidates = async (q) => {
      const answer = await read(q);
      // another scheduler fills both destinations between our read and our claim, one of them for good
      full.placement.setAllocation('thief', { 'cn-c1-002': { VCPU: 2 }, 'cn-c1-003': { VCPU: 2 } });
      return answer;
    };
    const none = await selectMove(core(full), {}, {}, 0);
    expect(none.kind === 'no_valid_host' && none.diagnosis.at(-1)?.reason).toBe('no capacity left (2 hosts)');
    expect(held(full, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
  });

  it('reverts and rethrows when placement fails during the move claim', async () => {
    const cloud = cloudWithInstance();
    cloud.placement.claimMove = () => Promise.reject(new Error('placement unreachable'));
    await expect(selectMove(core(cloud))).rejects.toThrow('placement unreachable');
    expect(cloud.placement.reverts).toEqual([['vm', MIG]]);
    expect(cloud.placement.releaseLog).toEqual([]);
  });

  it('a moving instance is not its own neighbour: the only member of an affinity group can move', async () => {
    const cloud = cloudWithInstance(1, 3);
    const g: InstanceGroup = { uuid: 'g-1', policy: 'affinity', hosts: [], members: ['vm'], maxServerPerHost: 0 };
    const [chosen] = selected(await selectMove(core(cloud), { instanceGroup: g }));
    expect(chosen?.serviceHost).not.toBe('host-c1-1');
    // another member on host-c1-2 pins an anti-affinity move away from it
    const anti = cloudWithInstance(1, 3);
    anti.placement.setAllocation('other', { 'cn-c1-002': SMALL_ALLOC });
    const ga: InstanceGroup = { uuid: 'g-2', policy: 'anti-affinity', hosts: [], members: ['vm', 'other'], maxServerPerHost: 0 };
    expect(selected(await selectMove(core(anti), { instanceGroup: ga }, {}, 0)).map((s) => s.serviceHost)).toEqual(['host-c1-3']);
  });

  describe('a forced destination (evacuate / live migration with force: Nova bypasses the scheduler)', () => {
    const forcedTo = (host: string): Partial<RequestSpec> => ({
      requestedDestination: { host, node: '', cellUuid: 'cell-1', aggregates: [], allowCrossCellMove: false },
    });
    const disable = (cloud: Cloud, uuid: string): void => {
      const rec = cloud.snapshot.records.get(uuid);
      if (rec !== undefined) cloud.snapshot.records.set(uuid, { ...rec, serviceDisabled: true, serviceDisabledReason: 'maintenance' });
    };

    it('claims the host with a move claim although the filters would refuse it, and returns no alternate', async () => {
      const cloud = cloudWithInstance();
      disable(cloud, 'cn-c1-003');
      // unforced, the ComputeFilter removes the disabled host: NoValidHost
      expect((await selectMove(core(cloud), forcedTo('host-c1-3'))).kind).toBe('no_valid_host');
      const list = selected(await selectMove(core(cloud), forcedTo('host-c1-3'), { force: true }, 2));
      expect(list.map((s) => s.serviceHost)).toEqual(['host-c1-3']);
      expect(held(cloud, 'vm')).toEqual({ 'cn-c1-003': SMALL_ALLOC });
      expect(held(cloud, MIG)).toEqual({ 'cn-c1-001': SMALL_ALLOC });
      expect(cloud.placement.moveClaims.at(-1)).toEqual(['vm', MIG]);
    });

    it("still needs placement's capacity on that host: NoValidHost with Nova's message, the instance back on its source", async () => {
      const cloud = cloudWithInstance(1, 3);
      cloud.placement.setAllocation('other', { 'cn-c1-002': { VCPU: 8, MEMORY_MB: 8192, DISK_GB: 100 } });
      const r = await selectMove(core(cloud), forcedTo('host-c1-2'), { force: true });
      expect(r).toMatchObject({
        kind: 'no_valid_host',
        reason: 'Unable to move instance vm to host host-c1-2. There is not enough capacity on the host for the instance.',
      });
      expect(held(cloud, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
      expect(held(cloud, MIG)).toBeUndefined();
      expect(cloud.placement.overCapacity()).toEqual([]);
    });

    it("stays in the instance's cell and off the source", async () => {
      const cloud = cloudWithInstance();
      expect((await selectMove(core(cloud), forcedTo('host-c2-1'), { force: true })).kind).toBe('no_valid_host');
      expect((await selectMove(core(cloud), forcedTo('host-c1-1'), { force: true })).kind).toBe('no_valid_host');
      expect(held(cloud, 'vm')).toEqual({ 'cn-c1-001': SMALL_ALLOC });
    });

    it('is refused without a requested host', async () => {
      await expect(selectMove(core(cloudWithInstance()), {}, { force: true })).rejects.toThrow(
        'a forced move needs request_spec.requested_destination.host',
      );
    });
  });

  it('refuses a malformed move before reading or writing anything', async () => {
    const cloud = cloudWithInstance();
    const c = core(cloud);
    const base = { spec: spec({ flavor: SMALL }), numAlternates: 0, allocationRequestVersion: '1.36' };
    await expect(c.selectDestinations({ ...base, instanceUuids: ['vm', 'vm2'], move: move() })).rejects.toThrow(InvalidSchedulerRequest);
    await expect(c.selectDestinations({ ...base, instanceUuids: ['vm'], move: move({ migrationUuid: '' }) })).rejects.toThrow(
      'move.migration_uuid is required',
    );
    await expect(c.selectDestinations({ ...base, instanceUuids: ['vm'], move: move({ sourceHost: '' }) })).rejects.toThrow(
      'move.source_host is required',
    );
    await expect(c.selectDestinations({ ...base, instanceUuids: ['vm'], move: move({ migrationUuid: 'vm' }) })).rejects.toThrow(
      'must not be the instance uuid',
    );
    expect(cloud.snapshot.calls.candidates).toBe(0);
    expect(cloud.placement.reverts).toEqual([]);
  });

  it('leaves the boot path as it was: a plain claim, never a move claim or a revert', async () => {
    const cloud = cloudWithInstance();
    const r = await core(cloud).selectDestinations({
      spec: spec({ flavor: SMALL }),
      instanceUuids: ['new'],
      numAlternates: 1,
      allocationRequestVersion: '1.36',
    });
    expect(r.kind).toBe('selected');
    expect(cloud.placement.moveClaims).toEqual([]);
    expect(cloud.placement.reverts).toEqual([]);
  });
});

describe('a move that may cross cells (requested_destination.allow_cross_cell_move)', () => {
  /** cell-1's other hosts half full, so the spread weighers alone would leave for cell-2. */
  function busyHomeCell(): Cloud {
    const cloud = cloudWithInstance(2, 3);
    for (const cn of ['cn-c1-002', 'cn-c1-003'])
      cloud.placement.setAllocation(`busy-${cn}`, { [cn]: { VCPU: 4, MEMORY_MB: 4096, DISK_GB: 50 } });
    return cloud;
  }
  const crossCell = { requestedDestination: { host: '', node: '', cellUuid: 'cell-1', aggregates: [], allowCrossCellMove: true } };

  it.each<[string, Partial<SchedulerPolicy>, string]>([
    ['CrossCellWeigher (default) keeps it in its cell', {}, 'cell-1'],
    [
      'without CrossCellWeigher the spread weighers take it to the emptier cell',
      { enabledWeighers: DEFAULT_POLICY.enabledWeighers.filter((w) => w !== 'CrossCellWeigher') },
      'cell-2',
    ],
    ['a negative multiplier prefers the other cells', { weightMultipliers: { cross_cell_move_weight_multiplier: -1000000 } }, 'cell-2'],
  ])('%s', async (_n, policy, cell) => {
    const [chosen, ...alternates] = selected(await selectMove(core(busyHomeCell(), { ...policy, hostSubsetSize: 1 }), crossCell));
    expect(chosen?.cellUuid).toBe(cell);
    for (const a of alternates) expect(a.cellUuid).toBe(cell);
  });

  it('leaves its cell when the cell has no room', async () => {
    const cloud = cloudWithInstance(2, 2);
    cloud.placement.setAllocation('full', { 'cn-c1-002': { VCPU: 8, MEMORY_MB: 8192, DISK_GB: 100 } });
    expect(selected(await selectMove(core(cloud), crossCell))[0]?.cellUuid).toBe('cell-2');
    // the same move restricted to its cell is NoValidHost
    expect((await selectMove(core(cloud))).kind).toBe('no_valid_host');
  });
});
