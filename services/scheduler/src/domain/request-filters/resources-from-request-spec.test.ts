import type { Flavor, GetAllocationCandidatesRequest } from '@cellsched/wire';
import { flavor, spec } from '../../../test/support/fixtures';
import { DEFAULT_POLICY } from '../policy';
import { resourcesFromRequestSpec, swapGb } from './resources-from-request-spec';

function run(f: Flavor): GetAllocationCandidatesRequest {
  const query: GetAllocationCandidatesRequest = {
    groups: [],
    groupPolicy: '',
    limit: 0,
    rootRequired: [],
    rootForbidden: [],
    sameSubtree: [],
    seed: 0,
  };
  resourcesFromRequestSpec.apply(query, { spec: spec({ flavor: f }), flavor: f, image: undefined, policy: DEFAULT_POLICY, aggregates: [] });
  return query;
}

describe('resources_from_request_spec', () => {
  it.each([
    ['standard resources', flavor({ vcpus: 2, memoryMb: 2048, rootGb: 20 }), { VCPU: 2, MEMORY_MB: 2048, DISK_GB: 20 }],
    [
      'ephemeral and swap add to DISK_GB, swap rounded up to GiB',
      flavor({ rootGb: 10, ephemeralGb: 5, swap: 1025 }),
      { VCPU: 1, MEMORY_MB: 512, DISK_GB: 17 },
    ],
    ['swap of exactly 1 GiB', flavor({ rootGb: 1, swap: 1024 }), { VCPU: 1, MEMORY_MB: 512, DISK_GB: 2 }],
    ['zero disk is dropped', flavor({ rootGb: 0 }), { VCPU: 1, MEMORY_MB: 512 }],
    [
      'resources:VCPU overrides the flavor',
      flavor({ vcpus: 2, extraSpecs: { 'resources:VCPU': '6' } }),
      { VCPU: 6, MEMORY_MB: 512, DISK_GB: 1 },
    ],
    ['resources:DISK_GB=0 removes disk', flavor({ extraSpecs: { 'resources:DISK_GB': '0' } }), { VCPU: 1, MEMORY_MB: 512 }],
    ['custom class added', flavor({ extraSpecs: { 'resources:CUSTOM_GPU': '1' } }), { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1, CUSTOM_GPU: 1 }],
    [
      'hw:cpu_policy=dedicated asks PCPU',
      flavor({ vcpus: 4, extraSpecs: { 'hw:cpu_policy': 'dedicated' } }),
      { PCPU: 4, MEMORY_MB: 512, DISK_GB: 1 },
    ],
    ['resources:PCPU replaces VCPU', flavor({ vcpus: 4, extraSpecs: { 'resources:PCPU': '2' } }), { PCPU: 2, MEMORY_MB: 512, DISK_GB: 1 }],
  ])('%s', (_name, f, expected) => {
    const q = run(f);
    expect(q.groups[0]?.suffix).toBe('');
    expect(q.groups[0]?.resources).toEqual(expected);
  });

  it('builds granular groups from resourcesN: and resources_NAME: with the group policy', () => {
    const q = run(flavor({ extraSpecs: { 'resources1:SRIOV_NET_VF': '1', 'resources_NET:CUSTOM_BW': '10', group_policy: 'isolate' } }));
    expect(q.groups.map((g) => [g.suffix, g.resources])).toEqual([
      ['', { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 }],
      ['1', { SRIOV_NET_VF: 1 }],
      ['_NET', { CUSTOM_BW: 10 }],
    ]);
    expect(q.groupPolicy).toBe('isolate');
  });

  it.each([
    ['negative amount', { 'resources:VCPU': '-1' }, /non-negative integer/],
    ['not a number', { 'resources:VCPU': 'two' }, /non-negative integer/],
    ['two granular groups without group_policy', { 'resources1:A_X': '1', 'resources2:A_Y': '1' }, /group_policy is required/],
    ['bad group_policy', { group_policy: 'sometimes' }, /"none" or "isolate"/],
  ])('refuses %s', (_name, extraSpecs, message) => {
    expect(() => run(flavor({ extraSpecs }))).toThrow(message);
  });

  it.each([
    [0, 0],
    [1, 1],
    [1024, 1],
    [1025, 2],
    [2048, 2],
  ])('swap %i MiB is %i GiB', (mb, gb) => {
    expect(swapGb(mb)).toBe(gb);
  });
});
