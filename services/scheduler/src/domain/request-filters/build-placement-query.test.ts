import { flavor, spec } from '../../../test/support/fixtures';
import { DEFAULT_POLICY } from '../policy';
import { buildPlacementQuery } from './build-placement-query';
import type { RequestSpec } from '@cellsched/wire';

function build(s: RequestSpec, policy = DEFAULT_POLICY) {
  return buildPlacementQuery({
    spec: s,
    flavor: s.flavor!,
    image: s.image,
    policy,
    aggregates: [{ uuid: 'agg1', name: 'a', metadata: { availability_zone: 'az1' } }],
  });
}

describe('buildPlacementQuery', () => {
  it('assembles the whole query in one pass', () => {
    const r = build(spec({ availabilityZone: 'az1', seed: 7, flavor: flavor({ extraSpecs: { 'trait:HW_CPU_X86_AVX2': 'required' } }) }));
    expect(r).toEqual({
      kind: 'ok',
      query: {
        groups: [
          {
            suffix: '',
            resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 },
            required: ['HW_CPU_X86_AVX2'],
            forbidden: [],
            memberOf: ['agg1'],
            forbiddenMemberOf: [],
            inTree: '',
          },
        ],
        groupPolicy: '',
        limit: 1000,
        rootRequired: [],
        rootForbidden: ['COMPUTE_STATUS_DISABLED'],
        sameSubtree: [],
        seed: 7,
      },
    });
  });

  it.each([
    ['plain request keeps max_placement_results', spec(), 1000],
    ['same_host hint drops the limit', spec({ schedulerHints: { same_host: 'i1' } }), 0],
    ['different_host hint drops the limit', spec({ schedulerHints: { different_host: 'i1' } }), 0],
    [
      'anti-affinity group drops the limit',
      spec({ instanceGroup: { uuid: 'g', policy: 'anti-affinity', hosts: [], members: [], maxServerPerHost: 0 } }),
      0,
    ],
    [
      'soft-affinity group drops the limit',
      spec({ instanceGroup: { uuid: 'g', policy: 'soft-affinity', hosts: [], members: [], maxServerPerHost: 0 } }),
      0,
    ],
    ['an unrelated hint keeps it', spec({ schedulerHints: { build_near_host_ip: '10.0.0.1' } }), 1000],
    [
      'a requested host drops it',
      spec({ requestedDestination: { host: 'h1', node: '', cellUuid: '', aggregates: [], allowCrossCellMove: false } }),
      0,
    ],
    [
      'requested aggregates only keep it',
      spec({ requestedDestination: { host: '', node: '', cellUuid: '', aggregates: ['a1'], allowCrossCellMove: false } }),
      1000,
    ],
  ])('%s', (_n, s, limit) => {
    const r = build(s);
    expect(r.kind === 'ok' && r.query.limit).toBe(limit);
  });

  it('turns requested_destination.aggregates into member_of, one entry each', () => {
    const r = build(
      spec({ requestedDestination: { host: '', node: '', cellUuid: '', aggregates: ['a1,a2', 'b1'], allowCrossCellMove: false } }),
    );
    expect(r.kind === 'ok' && r.query.groups[0]?.memberOf).toEqual(['in:a1,a2', 'b1']);
  });

  it('reports the request filter that found no host', () => {
    const r = build(spec({ projectId: 'lonely' }), {
      ...DEFAULT_POLICY,
      limitTenantsToPlacementAggregate: true,
      placementAggregateRequiredForTenants: true,
    });
    expect(r).toEqual({
      kind: 'no_valid_host',
      filter: 'require_tenant_aggregate',
      reason: 'no host aggregate is available for project lonely',
    });
  });
});
