import { fakeCloud } from '../../test/support/fake-cloud';
import { flavor, spec } from '../../test/support/fixtures';
import { FILTER_REGISTRY } from './filters/registry';
import { fail, type HostFilter, PASS } from './filters/types';
import { DEFAULT_POLICY } from './policy';
import { SchedulerCore } from './select-destinations';
import { WEIGHER_REGISTRY } from './weighers/registry';
import type { HostWeigher } from './weighers/types';

const request = (extraSpecs: Record<string, string> = {}, seed = 1) => ({
  spec: spec({ flavor: flavor({ extraSpecs }), seed }),
  instanceUuids: ['i1'],
  numAlternates: 3,
  allocationRequestVersion: '1.36',
});

describe('units are configured by name', () => {
  it('enabling AggregateInstanceExtraSpecsFilter by name restricts to matching aggregates', async () => {
    const cloud = fakeCloud(1, 4);
    for (const uuid of ['cn-c1-002', 'cn-c1-004']) {
      const r = cloud.snapshot.records.get(uuid)!;
      cloud.snapshot.records.set(uuid, { ...r, aggregates: [{ uuid: 'agg-ssd', name: 'ssd', metadata: { ssd: 'true' } }] });
    }
    const core = new SchedulerCore(cloud.ports, {
      ...DEFAULT_POLICY,
      enabledFilters: [...DEFAULT_POLICY.enabledFilters, 'AggregateInstanceExtraSpecsFilter'],
    });
    const r = await core.selectDestinations(request({ 'aggregate_instance_extra_specs:ssd': 'true' }));
    expect(r.kind === 'selected' && r.destinations[0]?.map((s) => s.computeNodeUuid).sort()).toEqual(['cn-c1-002', 'cn-c1-004']);
  });

  it('a new filter and weigher plug in through the registries without touching the core', async () => {
    const oddOut: HostFilter = { name: 'OddHostFilter', hostPasses: (h) => (/[13579]$/.test(h.record.uuid) ? fail('odd host') : PASS) };
    const lastFirst: HostWeigher = {
      name: 'UuidWeigher',
      multiplierOption: 'uuid_weight_multiplier',
      defaultMultiplier: 1,
      weigh: (h) => Number(h.record.uuid.slice(-3)),
    };
    const cloud = fakeCloud(1, 6);
    const core = new SchedulerCore(
      cloud.ports,
      { ...DEFAULT_POLICY, enabledFilters: ['ComputeFilter', 'OddHostFilter'], enabledWeighers: ['UuidWeigher'] },
      {
        filters: new Map([...FILTER_REGISTRY, [oddOut.name, oddOut]]),
        weighers: new Map([...WEIGHER_REGISTRY, [lastFirst.name, lastFirst]]),
      },
    );
    const r = await core.selectDestinations(request());
    expect(r.kind === 'selected' && r.destinations[0]?.map((s) => s.computeNodeUuid)).toEqual(['cn-c1-006', 'cn-c1-004', 'cn-c1-002']);
  });
});
