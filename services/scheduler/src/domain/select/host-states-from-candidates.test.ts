import type { AllocationCandidate, GetAllocationCandidatesResponse, ProviderSummary } from '@cellsched/wire';
import { record } from '../../../test/support/fixtures';
import type { ComputeNodeRecord } from '../host-state';
import { candidateRoot, candidateRoots, hostStatesFromCandidates } from './host-states-from-candidates';

const summary = (uuid: string, root: string, resources: Record<string, [number, number]>): ProviderSummary => ({
  uuid,
  name: uuid,
  rootProviderUuid: root,
  parentProviderUuid: root === uuid ? '' : root,
  traits: [],
  generation: 1,
  aggregates: [],
  resources: Object.fromEntries(Object.entries(resources).map(([rc, [capacity, used]]) => [rc, { capacity, used }])),
});
const cand = (...parts: [string, Record<string, number>][]): AllocationCandidate => ({
  allocations: parts.map(([resourceProviderUuid, resources]) => ({ resourceProviderUuid, resources })),
  mappings: {},
});

// cn1 has a child NUMA/PF provider; "shared" is a sharing DISK_GB provider (its own root).
const RESP: GetAllocationCandidatesResponse = {
  allocationRequests: [
    cand(['shared', { DISK_GB: 10 }], ['cn1', { VCPU: 1, MEMORY_MB: 512 }]),
    cand(['cn1-pf', { SRIOV_NET_VF: 1 }], ['cn1', { VCPU: 1, MEMORY_MB: 512 }]),
    cand(['cn2', { VCPU: 1, MEMORY_MB: 512, DISK_GB: 10 }]),
    cand(['ghost', { VCPU: 1 }]),
  ],
  providerSummaries: {
    cn1: summary('cn1', 'cn1', { VCPU: [8, 2], MEMORY_MB: [4096, 1024] }),
    'cn1-pf': summary('cn1-pf', 'cn1', { SRIOV_NET_VF: [4, 0] }),
    shared: summary('shared', 'shared', { DISK_GB: [1000, 100] }),
    cn2: summary('cn2', 'cn2', { VCPU: [4, 0], MEMORY_MB: [2048, 0], DISK_GB: [50, 0] }),
    ghost: summary('ghost', 'ghost', { VCPU: [1, 0] }),
  },
};
const NODES = new Map<string, ComputeNodeRecord>([
  ['cn1', record({ uuid: 'cn1' })],
  ['cn2', record({ uuid: 'cn2' })],
]);

describe('candidate -> HostState mapping', () => {
  it.each([
    ['a sharing provider first still maps to the compute node', 0, 'cn1'],
    ['a child provider maps to its root', 1, 'cn1'],
    ['a plain compute node', 2, 'cn2'],
    ['an unknown root is reported as itself', 3, 'ghost'],
  ])('%s', (_n, index, root) => {
    expect(candidateRoot(RESP.allocationRequests[index]!, RESP.providerSummaries, NODES)).toBe(root);
  });

  it('groups candidates per compute node, keeps private usage per provider, reports unknown roots', () => {
    const out = hostStatesFromCandidates(RESP, NODES, 'nova');
    expect(out.hosts.map((h) => [h.record.uuid, h.allocationCandidates.length])).toEqual([
      ['cn1', 2],
      ['cn2', 1],
    ]);
    expect(out.unknownRoots).toEqual(['ghost']);
    const cn1 = out.hosts[0]!;
    expect([...cn1.providers.keys()].sort()).toEqual(['cn1', 'cn1-pf', 'shared']);
    cn1.providers.get('cn1')!.get('VCPU')!.used = 99;
    expect(RESP.providerSummaries.cn1?.resources.VCPU?.used).toBe(2);
  });

  it('lists every root named by the answer, once, in order', () => {
    expect(candidateRoots(RESP)).toEqual(['shared', 'cn1', 'cn2', 'ghost']);
  });
});
