import type { GetAllocationCandidatesRequest, GetAllocationCandidatesResponse } from '@cellsched/wire';
import { hostState } from '../../../test/support/fixtures';
import type { ClaimDeps } from './claim-on-host';
import { refreshRemaining } from './refresh-after-refusal';

const baseQuery: GetAllocationCandidatesRequest = {
  groups: [{ suffix: '', resources: { VCPU: 1 }, required: [], forbidden: [], memberOf: [], forbiddenMemberOf: [], inTree: '' }],
  groupPolicy: '',
  limit: 3,
  rootRequired: [],
  rootForbidden: [],
  sameSubtree: [],
  seed: 1,
};

/** Placement's fresh answer: a candidate per root with VCPU used. */
function fresh(roots: Readonly<Record<string, number>>): GetAllocationCandidatesResponse {
  const entries = Object.entries(roots);
  return {
    allocationRequests: entries.map(([uuid]) => ({ allocations: [{ resourceProviderUuid: uuid, resources: { VCPU: 1 } }], mappings: {} })),
    providerSummaries: Object.fromEntries(
      entries.map(([uuid, used]) => [
        uuid,
        {
          uuid,
          name: uuid,
          rootProviderUuid: uuid,
          parentProviderUuid: '',
          resources: { VCPU: { capacity: 8, used } },
          traits: [],
          generation: 2,
          aggregates: [],
        },
      ]),
    ),
  };
}

function deps(answer: GetAllocationCandidatesResponse, limit: number): { deps: ClaimDeps; calls: { fresh?: boolean }[] } {
  const calls: { fresh?: boolean }[] = [];
  return {
    calls,
    deps: {
      query: { ...baseQuery, limit },
      maxConflictRetries: 3,
      claimer: {
        claim: () => Promise.reject(new Error('unused')),
        claimMove: () => Promise.reject(new Error('unused')),
        revertMove: () => Promise.resolve(),
        release: () => Promise.resolve(),
      },
      snapshot: {
        getAllocationCandidates: (_q, o) => {
          calls.push(o ?? {});
          return Promise.resolve(answer);
        },
        getComputeNodes: () => Promise.resolve(new Map()),
        getAggregates: () => Promise.resolve([]),
        getGroupMemberHosts: () => Promise.resolve(new Map()),
        getInstanceHosts: () => Promise.resolve(new Set()),
      },
    },
  };
}

test.each([
  ['complete answer (under the limit): keeps only offered hosts, with fresh usage', 3, { a: 7, c: 2 }, ['a', 'c'], 7],
  ['complete answer, nothing fits any more: nothing left', 0, {}, [], undefined],
  ['limited answer (exactly the limit): keeps every host as it was', 2, { a: 7, c: 2 }, ['a', 'b', 'c'], 0],
])('%s', async (_name, limit, roots, kept, usedOnA) => {
  const hosts = ['a', 'b', 'c'].map((uuid) => hostState({ uuid }));
  const d = deps(fresh(roots), limit);
  const out = await refreshRemaining(hosts, d.deps);
  expect(out.map((h) => h.record.uuid)).toEqual(kept);
  expect(d.calls).toEqual([{ fresh: true }]);
  expect(
    out
      .find((h) => h.record.uuid === 'a')
      ?.providers.get('a')
      ?.get('VCPU')?.used,
  ).toBe(usedOnA);
});
