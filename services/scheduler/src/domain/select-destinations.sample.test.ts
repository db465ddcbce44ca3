/**
 * Nomad's scoring limit (`hostSampleSize`): one instance without a group weighs a seeded sample of
 * the candidate hosts; a sample that cannot place it falls back to every host.
 */
import type { RequestSpec } from '@cellsched/wire';
import { fakeCloud } from '../../test/support/fake-cloud';
import { flavor, spec } from '../../test/support/fixtures';
import { DEFAULT_POLICY, policyNumberErrors, type SchedulerPolicy } from './policy';
import { SchedulerCore, type SelectDestinationsResult } from './select-destinations';

const SMALL = flavor({ vcpus: 1, memoryMb: 1024, rootGb: 10 });

function setup(policy: Partial<SchedulerPolicy> = {}) {
  const cloud = fakeCloud(2, 20);
  const lookups: number[] = [];
  const original = cloud.snapshot.getComputeNodes.bind(cloud.snapshot);
  cloud.snapshot.getComputeNodes = (uuids) => {
    lookups.push(uuids.length);
    return original(uuids);
  };
  const core = new SchedulerCore(cloud.ports, { ...DEFAULT_POLICY, hostSampleSize: 5, ...policy });
  const select = (uuids: string[], s: Partial<RequestSpec> = {}, numAlternates = 0): Promise<SelectDestinationsResult> =>
    core.selectDestinations({ spec: spec({ flavor: SMALL, ...s }), instanceUuids: uuids, numAlternates, allocationRequestVersion: '1.36' });
  return { cloud, lookups, select };
}

function chosenHost(r: SelectDestinationsResult): string {
  if (r.kind !== 'selected') throw new Error(`NoValidHost: ${r.reason}`);
  return r.destinations[0]?.[0]?.computeNodeUuid ?? '';
}

test('one instance looks up, filters and weighs only the sample, and claims one of those hosts', async () => {
  const s = setup();
  const r = await s.select(['i1'], { seed: 7 }, 2);
  expect(s.lookups).toEqual([5]);
  expect(s.cloud.placement.allocations.get('i1')?.has(chosenHost(r))).toBe(true);
  if (r.kind !== 'selected') throw new Error('not selected');
  expect(r.destinations[0]?.length).toBeGreaterThanOrEqual(1);
});

test('different seeds sample different hosts; the same seed the same choice', async () => {
  const chosen = new Set<string>();
  for (let seed = 1; seed <= 20; seed += 1) chosen.add(chosenHost(await setup().select(['i1'], { seed })));
  expect(chosen.size).toBeGreaterThan(5);
  expect(chosenHost(await setup().select(['i1'], { seed: 3 }))).toBe(chosenHost(await setup().select(['i1'], { seed: 3 })));
});

test('a sample without a usable host falls back to every host, claiming the only one that works', async () => {
  let fellBack = 0;
  for (let seed = 1; seed <= 10; seed += 1) {
    const s = setup();
    for (const [uuid, r] of s.cloud.snapshot.records)
      if (uuid !== 'cn-c2-013') s.cloud.snapshot.records.set(uuid, { ...r, serviceDisabled: true });
    expect(chosenHost(await s.select(['i1'], { seed }))).toBe('cn-c2-013');
    if (s.lookups.length === 2) {
      fellBack += 1;
      expect(s.lookups[1]).toBe(40);
    }
    expect(s.cloud.placement.stats.releaseCalls).toBe(0);
  }
  expect(fellBack).toBeGreaterThan(0);
});

test('NoValidHost after the fallback: diagnosis over every host, consumers released once', async () => {
  const s = setup();
  for (const [uuid, r] of s.cloud.snapshot.records) s.cloud.snapshot.records.set(uuid, { ...r, serviceDisabled: true });
  const r = await s.select(['i1'], { seed: 1 });
  expect(r.kind).toBe('no_valid_host');
  if (r.kind !== 'no_valid_host') return;
  expect(r.diagnosis.find((d) => d.filter === 'ComputeFilter')).toMatchObject({ hostsBefore: 40, hostsAfter: 0 });
  expect(s.lookups).toEqual([5, 40]);
  expect(s.cloud.placement.stats.releaseCalls).toBe(1);
});

test.each<[string, string[], Partial<RequestSpec>, Partial<SchedulerPolicy>]>([
  ['a multi-create', ['a', 'b'], {}, {}],
  ['a server group', ['a'], { instanceGroup: { uuid: 'g1', policy: 'anti-affinity', members: [], rules: {} } as never }, {}],
  ['a pinned destination', ['a'], { requestedDestination: { host: 'host-c1-3', node: '', cellUuid: '' } as never }, {}],
  ['sampling off (0)', ['a'], {}, { hostSampleSize: 0 }],
])('%s weighs every host', async (_name, uuids, s, policy) => {
  const t = setup(policy);
  await t.select(uuids, s);
  expect(t.lookups[0]).toBe(40);
});

test('host_sample_size must be a non-negative integer', () => {
  expect(policyNumberErrors({ ...DEFAULT_POLICY, hostSampleSize: -1 })).toEqual(['host_sample_size must be an integer >= 0, got -1']);
  expect(policyNumberErrors({ ...DEFAULT_POLICY, hostSampleSize: 2.5 })).toHaveLength(1);
  expect(policyNumberErrors({ ...DEFAULT_POLICY, hostSampleSize: 0 })).toEqual([]);
});
