import { CandidateQueryError } from './errors';
import { parseCandidateQuery } from './query-parser';

const parse = (qs: string, minor: number) => parseCandidateQuery([...new URLSearchParams(qs)], minor);

describe('parseCandidateQuery: accepted queries', () => {
  test.each([
    [
      'resources=VCPU:1,MEMORY_MB:512',
      10,
      [
        {
          suffix: '',
          resources: [
            ['VCPU', 1],
            ['MEMORY_MB', 512],
          ],
        },
      ],
    ],
    [
      'resources1=VCPU:1&resources2=VCPU:2&group_policy=none',
      25,
      [
        { suffix: '1', resources: [['VCPU', 1]] },
        { suffix: '2', resources: [['VCPU', 2]] },
      ],
    ],
    ['resources_NET=SRIOV_NET_VF:1&group_policy=isolate', 33, [{ suffix: '_NET', resources: [['SRIOV_NET_VF', 1]] }]],
  ])('%s at 1.%d', (qs, minor, expected) => {
    const { groups } = parse(qs, minor);
    expect(groups.map((g) => ({ suffix: g.suffix, resources: [...g.resources] }))).toEqual(expected);
  });

  test('required: AND of any-of sets at 1.39, forbidden traits, last value only before 1.39', () => {
    const g = parse('resources=VCPU:1&required=A,!B&required=in:C,D', 39).groups[0];
    expect([g?.requiredTraits, g?.forbiddenTraits]).toEqual([[['A'], ['C', 'D']], ['B']]);
    expect(parse('resources=VCPU:1&required=A&required=E', 38).groups[0]?.requiredTraits).toEqual([['E']]);
  });

  test('request-wide parameters', () => {
    const { params } = parse(
      'resources=VCPU:1&limit=5&root_required=X,!Y&same_subtree=_A,_B&resources_A=VCPU:1&resources_B=VCPU:1&group_policy=none',
      36,
    );
    expect(params).toMatchObject({
      limit: 5,
      rootRequired: ['X'],
      rootForbidden: ['Y'],
      sameSubtrees: [['_A', '_B']],
      groupPolicy: 'none',
      nestedAware: true,
    });
  });

  test('a repeated limit or group_policy: schema on the last value, search on the first (webob)', () => {
    const two = 'resources1=VCPU:1&resources2=VCPU:1';
    expect(parse(`${two}&group_policy=mixed&group_policy=isolate`, 25).params.groupPolicy).toBe('none');
    expect(parse(`${two}&group_policy=isolate&group_policy=none`, 25).params.groupPolicy).toBe('isolate');
    expect(() => parse(`${two}&group_policy=&group_policy=none`, 25)).toThrow('The "group_policy" parameter is required');
    expect(parse('resources=VCPU:1&limit=3&limit=9', 16).params.limit).toBe(3);
  });
});

describe('parseCandidateQuery: Placement 400s', () => {
  test.each([
    ['resources=', 10, 'Got: empty string.'],
    ['', 10, "'resources' is a required property"],
    ['resources=VCPU:1&limit=5', 15, "'limit' was unexpected"],
    ['resources=VCPU:1&limit=0', 16, "Failed validating 'pattern'"],
    ['resources=VCPU:x', 10, 'expected positive integer amount. Got: x.'],
    ['resources=VCPU:0', 10, 'requires amount >= 1. Got: 0.'],
    ['resources=VCPU:1&required=!A', 21, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !A"],
    ['resources=VCPU:1&required=A,!A', 22, 'Conflicting required and forbidden traits'],
    ['resources=VCPU:1&required=in:A,B', 38, 'only supported since microversion 1.39'],
    ['resources=VCPU:1&member_of=a,b', 24, "must be prefixed with the 'in:' or '!in:' keyword"],
    ['resources=VCPU:1&member_of=!5e5c6b64-6f63-4a4f-8d4b-1d41b7e6c4a1', 31, 'Forbidden member_of parameters are not supported'],
    ['resources1=VCPU:1&resources2=VCPU:1', 25, 'The "group_policy" parameter is required'],
    ['required1=A', 25, 'All traits parameters must be associated with resources.'],
    ['resources01=VCPU:1', 25, 'does not match any of the regexes'],
    ['resources=VCPU:1&required_X=A', 36, 'Resourceless suffixed group request should be specified in `same_subtree`'],
    ['resources=VCPU:1&same_subtree=_X', 36, 'Real suffixes should be specified in `same_subtree`'],
    ['resources=VCPU:1&root_required=A&root_required=B', 35, 'may be specified only once'],
    ['resources=VCPU:1&in_tree=nope', 31, "Expected 'in_tree' parameter to be a format of uuid"],
  ])('%s at 1.%d', (qs, minor, message) => {
    expect(() => parse(qs, minor)).toThrow(CandidateQueryError);
    expect(() => parse(qs, minor)).toThrow(message);
  });
});
