import type { RequestSpec, Selection } from '@cellsched/wire';
import { fakeCloud } from '../../test/support/fake-cloud';
import { flavor, NOW, record, spec } from '../../test/support/fixtures';
import { InvalidSchedulerPolicy, InvalidSchedulerRequest } from './errors';
import { DEFAULT_POLICY, type SchedulerPolicy } from './policy';
import { SchedulerCore, type SelectDestinationsResult } from './select-destinations';

const SMALL = flavor({ vcpus: 1, memoryMb: 1024, rootGb: 10 });

function core(ports: ReturnType<typeof fakeCloud>['ports'], policy: Partial<SchedulerPolicy> = {}): SchedulerCore {
  return new SchedulerCore(ports, { ...DEFAULT_POLICY, ...policy });
}

function select(c: SchedulerCore, uuids: string[], numAlternates = 0, s: Partial<RequestSpec> = {}): Promise<SelectDestinationsResult> {
  return c.selectDestinations({
    spec: spec({ flavor: SMALL, ...s }),
    instanceUuids: uuids,
    numAlternates,
    allocationRequestVersion: '1.36',
  });
}

function selected(r: SelectDestinationsResult): Selection[][] {
  if (r.kind !== 'selected') throw new Error(`expected a selection, got NoValidHost: ${r.reason} ${JSON.stringify(r.diagnosis)}`);
  return r.destinations;
}

describe('select_destinations', () => {
  it('claims on the best host and returns its Selection with the opaque allocation request', async () => {
    const cloud = fakeCloud(1, 3);
    cloud.placement.setAllocation('other', { 'cn-c1-001': { MEMORY_MB: 4096 } });
    const [[chosen, ...alternates] = []] = selected(await select(core(cloud.ports), ['i1']));
    expect(alternates).toEqual([]);
    expect(chosen?.serviceHost).not.toBe('host-c1-1');
    expect(chosen).toMatchObject({ cellUuid: 'cell-1', availabilityZone: 'nova', allocationRequest: { version: '1.36' } });
    const json = JSON.parse(chosen?.allocationRequest?.json ?? '{}') as { allocations: Record<string, { resources: object }> };
    expect(json.allocations).toEqual({ [chosen?.computeNodeUuid ?? '']: { resources: { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 } } });
    expect(cloud.placement.allocations.get('i1')?.has(chosen?.computeNodeUuid ?? '')).toBe(true);
  });

  it("gives alternates only from the chosen host's cell, never a chosen host, each with its own allocation request", async () => {
    for (let seed = 1; seed <= 10; seed += 1) {
      const cloud = fakeCloud(3, 4);
      const dest = selected(await select(core(cloud.ports, { hostSubsetSize: 12 }), ['i1', 'i2'], 2, { seed }));
      const chosen = new Set(dest.map((d) => d[0]?.computeNodeUuid));
      for (const [first, ...alts] of dest) {
        expect(alts).toHaveLength(2);
        for (const alt of alts) {
          expect(alt.cellUuid).toBe(first?.cellUuid);
          expect(chosen.has(alt.computeNodeUuid)).toBe(false);
          expect(Object.keys(JSON.parse(alt.allocationRequest?.json ?? '{}').allocations)).toEqual([alt.computeNodeUuid]);
          expect(cloud.placement.allocations.has(alt.computeNodeUuid)).toBe(false);
        }
      }
    }
  });

  it('returns fewer alternates when the cell has no more hosts', async () => {
    const cloud = fakeCloud(2, 2);
    const [[, ...alts] = []] = selected(await select(core(cloud.ports), ['i1'], 5));
    expect(alts).toHaveLength(1);
  });

  it("consumes in-request: instance N+1 sees instance N's claim without a failed claim", async () => {
    const cloud = fakeCloud(1, 2, { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 });
    const dest = selected(await select(core(cloud.ports), ['i1', 'i2']));
    expect(new Set(dest.map((d) => d[0]?.computeNodeUuid)).size).toBe(2);
    expect(cloud.placement.stats).toMatchObject({ claims: 2, noCapacity: 0, conflicts: 0 });
  });

  it('consumes in-request: stacking fills one host, then skips it without a wasted claim', async () => {
    const cloud = fakeCloud(1, 2, { VCPU: 2, MEMORY_MB: 2048, DISK_GB: 20 });
    const stack = core(cloud.ports, { enabledWeighers: ['RAMWeigher'], weightMultipliers: { ram_weight_multiplier: -1 } });
    const hosts = selected(await select(stack, ['i1', 'i2', 'i3'])).map((d) => d[0]?.computeNodeUuid);
    expect(hosts[0]).toBe(hosts[1]);
    expect(hosts[2]).not.toBe(hosts[0]);
    expect(cloud.placement.stats).toMatchObject({ claims: 3, noCapacity: 0 });
  });

  it('is all-or-nothing: when one instance cannot be placed every claim is released and NoValidHost returned', async () => {
    const cloud = fakeCloud(1, 2, { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 });
    const r = await select(core(cloud.ports), ['i1', 'i2', 'i3']);
    expect(r.kind).toBe('no_valid_host');
    expect(r.kind === 'no_valid_host' && r.reason).toBe('no host could be claimed for instance 3 of 3');
    expect(cloud.placement.allocations.size).toBe(0);
    expect(cloud.placement.releaseLog).toEqual([['i1', 'i2', 'i3']]);
  });

  it('answers NoValidHost with the per-filter diagnosis, without claiming', async () => {
    const cloud = fakeCloud(1, 3);
    const ago = new Date(NOW.getTime() - 3600_000);
    cloud.snapshot.records.set('cn-c1-001', record({ uuid: 'cn-c1-001', serviceDisabled: true }));
    cloud.snapshot.records.set('cn-c1-002', record({ uuid: 'cn-c1-002', lastHeartbeatAt: ago }));
    cloud.snapshot.records.set('cn-c1-003', record({ uuid: 'cn-c1-003', availabilityZone: undefined, lastHeartbeatAt: ago } as never));
    const r = await select(core(cloud.ports), ['i1']);
    expect(r).toEqual({
      kind: 'no_valid_host',
      reason: 'no host passed the filters',
      claimRetries: 0,
      diagnosis: [
        { filter: 'allocation_candidates', hostsBefore: 3, hostsAfter: 3, reason: '' },
        { filter: 'host_state_snapshot', hostsBefore: 3, hostsAfter: 3, reason: '' },
        {
          filter: 'ComputeFilter',
          hostsBefore: 3,
          hostsAfter: 0,
          reason: 'compute service is down (2 hosts); compute service is disabled (1 host)',
        },
      ],
    });
    expect(cloud.placement.stats.claims).toBe(0);
  });

  it('says why when placement has no candidate at all', async () => {
    const cloud = fakeCloud(1, 2);
    const r = await select(core(cloud.ports), ['i1'], 0, { flavor: flavor({ vcpus: 64 }) });
    expect(r.kind === 'no_valid_host' && r.diagnosis).toEqual([
      {
        filter: 'allocation_candidates',
        hostsBefore: 0,
        hostsAfter: 0,
        reason: 'placement has no allocation candidate for VCPU=64,MEMORY_MB=512,DISK_GB=1',
      },
    ]);
  });

  it('never chooses a disabled or down host, as chosen host or alternate', async () => {
    for (let seed = 0; seed < 20; seed += 1) {
      const cloud = fakeCloud(1, 8);
      const bad = new Set(['cn-c1-001', 'cn-c1-003', 'cn-c1-005', 'cn-c1-007']);
      for (const uuid of bad) {
        const r = cloud.snapshot.records.get(uuid);
        cloud.snapshot.records.set(uuid, {
          ...r!,
          ...(uuid.endsWith('1') || uuid.endsWith('5') ? { serviceDisabled: true } : { lastHeartbeatAt: undefined }),
        });
      }
      const dest = selected(await select(core(cloud.ports, { hostSubsetSize: 8 }), ['a', 'b'], 3, { seed }));
      for (const s of dest.flat()) expect(bad.has(s.computeNodeUuid)).toBe(false);
    }
  });

  it("explains a selection: each stage's host count and the heaviest hosts with their weights, the chosen one first", async () => {
    const cloud = fakeCloud(1, 8);
    for (const uuid of ['cn-c1-002', 'cn-c1-004'])
      cloud.snapshot.records.set(uuid, { ...cloud.snapshot.records.get(uuid)!, serviceDisabled: true });
    const r = await select(core(cloud.ports), ['i1'], 1, { seed: 7 });
    if (r.kind !== 'selected') throw new Error('expected a selection');
    const stages = r.explain.diagnosis.map((d) => [d.filter, d.hostsBefore, d.hostsAfter]);
    expect(stages[0]).toEqual(['allocation_candidates', 8, 8]);
    expect(stages).toContainEqual(['ComputeFilter', 8, 6]);
    expect(r.explain.sampled).toBe(false);
    expect(r.explain.top.length).toBe(5);
    expect(r.explain.top[0]?.host).toBe(r.destinations[0]?.[0]?.serviceHost);
    const weights = r.explain.top.map((t) => t.weight);
    expect([...weights].sort((a, b) => b - a)).toEqual(weights);
  });

  it('drops candidates the snapshot has no record for, and honours ignore_hosts', async () => {
    const cloud = fakeCloud(1, 3);
    cloud.snapshot.records.delete('cn-c1-001');
    const r = await select(core(cloud.ports), ['i1'], 0, { ignoreHosts: ['host-c1-2', 'host-c1-3'] });
    expect(r.kind === 'no_valid_host' && r.diagnosis.slice(1)).toEqual([
      { filter: 'host_state_snapshot', hostsBefore: 3, hostsAfter: 2, reason: 'no compute node record of a discovered host (1 host)' },
      { filter: 'ignore_hosts', hostsBefore: 2, hostsAfter: 0, reason: "host is in the request's ignore_hosts (2 hosts)" },
    ]);
  });
});

describe('select_destinations requested destination', () => {
  it.each([
    ['host', { host: 'host-c2-2', node: '', cellUuid: '' }, 'cn-c2-002'],
    ['node', { host: '', node: 'node-c1-3', cellUuid: '' }, 'cn-c1-003'],
  ])('pins the %s, even past max_placement_results', async (_n, dest, expected) => {
    const cloud = fakeCloud(2, 3);
    const r = await select(core(cloud.ports, { maxPlacementResults: 1 }), ['i1'], 2, {
      requestedDestination: { ...dest, aggregates: [], allowCrossCellMove: false },
    });
    expect(selected(r)[0]?.map((s) => s.computeNodeUuid)).toEqual([expected]);
  });

  it('keeps alternates inside a requested cell', async () => {
    const cloud = fakeCloud(2, 3);
    const r = await select(core(cloud.ports), ['i1'], 5, {
      requestedDestination: { host: '', node: '', cellUuid: 'cell-2', aggregates: [], allowCrossCellMove: false },
    });
    expect(selected(r)[0]?.map((s) => s.cellUuid)).toEqual(['cell-2', 'cell-2', 'cell-2']);
  });
});

describe('select_destinations disabled cells (cell_v2 update_cell --disable)', () => {
  const disable = (cloud: ReturnType<typeof fakeCloud>, cell: string): void => {
    for (const [uuid, r] of cloud.snapshot.records) if (r.cellUuid === cell) cloud.snapshot.records.set(uuid, { ...r, cellDisabled: true });
  };

  it('never chooses a host of a disabled cell, nor offers one as an alternate', async () => {
    for (let seed = 1; seed <= 10; seed += 1) {
      const cloud = fakeCloud(3, 4);
      disable(cloud, 'cell-1');
      disable(cloud, 'cell-3');
      const dest = selected(await select(core(cloud.ports), ['i1', 'i2'], 2, { seed }));
      expect(dest.flat().map((s) => s.cellUuid)).toEqual(Array(6).fill('cell-2'));
    }
  });

  it('says why when every cell is disabled: NoValidHost with a disabled_cells line and nothing claimed', async () => {
    const cloud = fakeCloud(2, 2);
    disable(cloud, 'cell-1');
    disable(cloud, 'cell-2');
    const r = await select(core(cloud.ports), ['i1']);
    expect(r.kind).toBe('no_valid_host');
    expect(r.kind === 'no_valid_host' && r.diagnosis.find((d) => d.filter === 'disabled_cells')).toEqual({
      filter: 'disabled_cells',
      hostsBefore: 4,
      hostsAfter: 0,
      reason: 'host is in a disabled cell (4 hosts)',
    });
    expect(cloud.placement.allocations.size).toBe(0);
  });

  it('a request that names a disabled cell gets that cell (as Nova: requested_destination.cell wins)', async () => {
    const cloud = fakeCloud(2, 3);
    disable(cloud, 'cell-1');
    const r = await select(core(cloud.ports), ['i1'], 2, {
      requestedDestination: { host: '', node: '', cellUuid: 'cell-1', aggregates: [], allowCrossCellMove: false },
    });
    expect(selected(r)[0]?.map((s) => s.cellUuid)).toEqual(['cell-1', 'cell-1', 'cell-1']);
  });

  it('adds no diagnosis line while no cell is disabled', async () => {
    const cloud = fakeCloud(1, 1, { VCPU: 0, MEMORY_MB: 8192, DISK_GB: 100 });
    const r = await select(core(cloud.ports), ['i1']);
    expect(r.kind === 'no_valid_host' && r.diagnosis.map((d) => d.filter)).not.toContain('disabled_cells');
  });
});

describe('select_destinations claims', () => {
  it('retries a conflicting host in a bounded tight loop and counts the retries', async () => {
    const cloud = fakeCloud(1, 1);
    cloud.placement.forcedConflicts.set('cn-c1-001', 2);
    const r = await select(core(cloud.ports, { claimConflictRetries: 3 }), ['i1']);
    expect(selected(r)[0]?.[0]?.computeNodeUuid).toBe('cn-c1-001');
    expect(r.claimRetries).toBe(2);
    expect(cloud.placement.stats.claims).toBe(3);
  });

  it('re-reads the conflicting host (in_tree) before each retry', async () => {
    const cloud = fakeCloud(1, 3);
    const queries: string[] = [];
    const read = cloud.snapshot.getAllocationCandidates.bind(cloud.snapshot);
    cloud.snapshot.getAllocationCandidates = (q) => {
      queries.push(q.groups.map((g) => g.inTree).join() || '*');
      return read(q);
    };
    cloud.placement.forcedConflicts.set('cn-c1-001', 2);
    cloud.placement.forcedConflicts.set('cn-c1-002', 2);
    cloud.placement.forcedConflicts.set('cn-c1-003', 2);
    const chosen = selected(await select(core(cloud.ports), ['i1']))[0]?.[0]?.computeNodeUuid ?? '';
    expect(queries).toEqual(['*', chosen, chosen]);
  });

  it('moves on to the next host once the conflict retries are exhausted', async () => {
    const cloud = fakeCloud(1, 2);
    cloud.placement.setAllocation('x', { 'cn-c1-002': { MEMORY_MB: 1024 } });
    cloud.placement.forcedConflicts.set('cn-c1-001', 100);
    const r = await select(core(cloud.ports, { claimConflictRetries: 3 }), ['i1']);
    expect(selected(r)[0]?.[0]?.computeNodeUuid).toBe('cn-c1-002');
    expect(r.claimRetries).toBe(3);
    expect(cloud.placement.stats.claims).toBe(5);
  });

  it('reports exhausted conflicts in the diagnosis when no host is left', async () => {
    const cloud = fakeCloud(1, 1);
    cloud.placement.forcedConflicts.set('cn-c1-001', 100);
    const r = await select(core(cloud.ports, { claimConflictRetries: 1 }), ['i1']);
    expect(r.kind === 'no_valid_host' && r.diagnosis.at(-1)).toEqual({
      filter: 'placement_claim',
      hostsBefore: 1,
      hostsAfter: 0,
      reason: 'concurrent updates exhausted retries (1 host)',
    });
  });

  it('no capacity moves on to the next host without retrying', async () => {
    const cloud = fakeCloud(1, 2, { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 });
    const best = cloud.placement.providers.get('cn-c1-001')!;
    best.inventory.MEMORY_MB = 4096;
    const read = cloud.snapshot.getAllocationCandidates.bind(cloud.snapshot);
    cloud.snapshot.getAllocationCandidates = async (q) => {
      const answer = await read(q);
      // Another scheduler fills the best host between our read and our claim.
      cloud.placement.setAllocation('thief', { 'cn-c1-001': { VCPU: 1 } });
      return answer;
    };
    const r = await select(core(cloud.ports), ['late']);
    expect(selected(r)[0]?.[0]?.computeNodeUuid).toBe('cn-c1-002');
    expect(r.claimRetries).toBe(0);
    expect(cloud.placement.stats).toMatchObject({ claims: 2, noCapacity: 1, conflicts: 0 });
  });

  it("a retried request replaces the consumer's claim instead of doubling it", async () => {
    const cloud = fakeCloud(1, 4);
    const c = core(cloud.ports, { hostSubsetSize: 4 });
    selected(await select(c, ['i1', 'i2'], 0, { seed: 1 }));
    selected(await select(c, ['i1', 'i2'], 0, { seed: 2 }));
    expect([...cloud.placement.allocations.keys()].sort()).toEqual(['i1', 'i2']);
    const totalRam = [...cloud.placement.providers.keys()].reduce((n, rp) => n + cloud.placement.used(rp, 'MEMORY_MB'), 0);
    expect(totalRam).toBe(2 * 1024);
  });

  it('a retried request that now gets NoValidHost releases what the consumer held', async () => {
    const cloud = fakeCloud(1, 1, { VCPU: 1, MEMORY_MB: 1024, DISK_GB: 10 });
    selected(await select(core(cloud.ports), ['i1']));
    // NOTE: placement's candidates do not discount the consumer's own claim, so the full cloud has none.
    const r = await select(core(cloud.ports), ['i1']);
    expect(r.kind === 'no_valid_host' && r.diagnosis[0]?.filter).toBe('allocation_candidates');
    expect(cloud.placement.allocations.size).toBe(0);
    expect(cloud.placement.releaseLog).toEqual([['i1']]);
  });

  it('releases every consumer of the request and rethrows when a port fails mid-request', async () => {
    const cloud = fakeCloud(1, 3);
    const claim = cloud.placement.claim.bind(cloud.placement);
    let calls = 0;
    cloud.placement.claim = (consumer, candidate, options) => {
      calls += 1;
      return calls === 2 ? Promise.reject(new Error('placement unreachable')) : claim(consumer, candidate, options);
    };
    await expect(select(core(cloud.ports), ['i1', 'i2'])).rejects.toThrow('placement unreachable');
    expect(cloud.placement.allocations.size).toBe(0);
    expect(cloud.placement.releaseLog).toEqual([['i1', 'i2']]);
  });
});

describe('select_destinations reproducibility and validation', () => {
  async function choices(seed: number): Promise<string[]> {
    const cloud = fakeCloud(2, 10);
    const dest = selected(await select(core(cloud.ports, { hostSubsetSize: 5 }), ['a', 'b', 'c'], 2, { seed }));
    return dest.flat().map((s) => s.computeNodeUuid);
  }

  it('same seed, same choices (ties and subsets included); other seeds differ', async () => {
    expect(await choices(7)).toEqual(await choices(7));
    const others = await Promise.all([1, 2, 3, 4, 5].map(choices));
    expect(new Set(others.map((o) => o.join())).size).toBeGreaterThan(1);
  });

  it.each<[string, Partial<RequestSpec>, string[], number, RegExp]>([
    ['no flavor', { flavor: undefined }, ['i1'], 0, /flavor is required/],
    ['no instance', {}, [], 0, /must not be empty/],
    ['duplicate uuids', {}, ['i1', 'i1'], 0, /distinct/],
    ['negative alternates', {}, ['i1'], -1, /num_alternates/],
    [
      'unknown group policy',
      { instanceGroup: { uuid: 'g', policy: 'together', hosts: [], members: [], maxServerPerHost: 0 } },
      ['i1'],
      0,
      /policy must be one of/,
    ],
  ])('refuses %s before reading or writing anything', async (_n, s, uuids, alts, message) => {
    const cloud = fakeCloud(1, 1);
    const c = core(cloud.ports);
    const req = c.selectDestinations({
      spec: { ...spec(), ...s },
      instanceUuids: uuids,
      numAlternates: alts,
      allocationRequestVersion: '',
    });
    await expect(req).rejects.toThrow(InvalidSchedulerRequest);
    await expect(req).rejects.toThrow(message);
    expect(cloud.snapshot.calls.candidates + cloud.placement.stats.claims).toBe(0);
  });

  it('refuses a malformed extra spec without releasing or claiming anything', async () => {
    const cloud = fakeCloud(1, 1);
    const req = select(core(cloud.ports), ['i1'], 0, { flavor: flavor({ extraSpecs: { 'resources:VCPU': 'many' } }) });
    await expect(req).rejects.toThrow(InvalidSchedulerRequest);
    expect(cloud.placement.stats).toMatchObject({ claims: 0, releaseCalls: 0, queries: 0 });
  });

  it('refuses a policy with unknown units or bad numbers, listing every problem', () => {
    const build = (): SchedulerCore =>
      core(fakeCloud(1, 1).ports, { enabledFilters: ['RamFilter'], enabledWeighers: ['Nope'], hostSubsetSize: 0 });
    expect(build).toThrow(InvalidSchedulerPolicy);
    expect(build).toThrow(/host_subset_size.*unknown filter RamFilter.*unknown weigher Nope/);
  });
});
