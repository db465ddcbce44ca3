import { enforcedGroup, groupProblems } from './server-group';

const G = '6f1c9a52-6a58-4f4e-9a0e-0d3d2a1b9c11';

test.each([
  ['anti-affinity', 0, [], { uuid: G, policy: 'anti-affinity', maxServerPerHost: 1 }],
  ['anti-affinity', 3, [], { uuid: G, policy: 'anti-affinity', maxServerPerHost: 3 }],
  ['affinity', 0, [], { uuid: G, policy: 'affinity', maxServerPerHost: 1 }],
  ['affinity', 1, [], { uuid: G, policy: 'affinity', maxServerPerHost: 1 }],
  ['soft-anti-affinity', 0, [], undefined],
  ['soft-affinity', 0, [], undefined],
  ['affinity', 2, ["group.max_server_per_host applies to the anti-affinity policy only, got 2 with 'affinity'"], undefined],
  [
    'anti_affinity',
    -1,
    [
      "group.policy must be one of affinity, anti-affinity, soft-affinity, soft-anti-affinity, got 'anti_affinity'",
      'group.max_server_per_host must be an integer >= 0, got -1',
    ],
    undefined,
  ],
])('%s with max_server_per_host %d', (policy, max, problems, enforced) => {
  const input = { uuid: G, policy, maxServerPerHost: max };
  expect(groupProblems(input)).toEqual(problems);
  if (problems.length === 0) expect(enforcedGroup(input)).toEqual(enforced);
});
