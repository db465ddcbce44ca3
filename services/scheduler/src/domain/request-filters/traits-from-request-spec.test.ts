import type { GetAllocationCandidatesRequest, ImageMeta } from '@cellsched/wire';
import { flavor, image, spec } from '../../../test/support/fixtures';
import { DEFAULT_POLICY } from '../policy';
import { traitsFromRequestSpec } from './traits-from-request-spec';

function run(extraSpecs: Record<string, string>, img?: ImageMeta): GetAllocationCandidatesRequest {
  const query: GetAllocationCandidatesRequest = {
    groups: [],
    groupPolicy: '',
    limit: 0,
    rootRequired: [],
    rootForbidden: [],
    sameSubtree: [],
    seed: 0,
  };
  const f = flavor({ extraSpecs });
  traitsFromRequestSpec.apply(query, { spec: spec({ flavor: f }), flavor: f, image: img, policy: DEFAULT_POLICY, aggregates: [] });
  return query;
}

describe('traits_from_request_spec', () => {
  it.each([
    ['flavor required', { 'trait:HW_CPU_X86_AVX2': 'required' }, undefined, [['', ['HW_CPU_X86_AVX2'], []]]],
    ['flavor forbidden', { 'trait:CUSTOM_SLOW': 'forbidden' }, undefined, [['', [], ['CUSTOM_SLOW']]]],
    ['granular group trait', { 'trait1:CUSTOM_PHYSNET_A': 'required' }, undefined, [['1', ['CUSTOM_PHYSNET_A'], []]]],
    ['image required', {}, image({ properties: { 'trait:HW_NIC_SRIOV': 'required' } }), [['', ['HW_NIC_SRIOV'], []]]],
    ['image forbidden is ignored, as in Nova', {}, image({ properties: { 'trait:CUSTOM_X': 'forbidden' } }), []],
    [
      'flavor and image merged once',
      { 'trait:A_T': 'required' },
      image({ properties: { 'trait:A_T': 'required', 'trait:B_T': 'required' } }),
      [['', ['A_T', 'B_T'], []]],
    ],
    ['other scopes ignored', { 'hw:cpu_policy': 'dedicated', 'aggregate_instance_extra_specs:ssd': 'true' }, undefined, []],
  ])('%s', (_name, extraSpecs, img, expected) => {
    const q = run(extraSpecs, img);
    expect(q.groups.map((g) => [g.suffix, g.required, g.forbidden])).toEqual(expected);
  });

  it.each([
    ['a value other than required/forbidden', { 'trait:X_Y': 'preferred' }, undefined, /must be "required" or "forbidden"/],
    [
      'a trait both required (image) and forbidden (flavor)',
      { 'trait:X_Y': 'forbidden' },
      image({ properties: { 'trait:X_Y': 'required' } }),
      /both required and forbidden/,
    ],
  ])('refuses %s', (_name, extraSpecs, img, message) => {
    expect(() => run(extraSpecs, img)).toThrow(message);
  });
});
