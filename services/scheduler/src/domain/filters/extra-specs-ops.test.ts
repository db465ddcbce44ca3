import { matchExtraSpec } from './extra-specs-ops';

describe('extra_specs_ops match', () => {
  it.each<[string | undefined, string, boolean]>([
    ['true', 'true', true],
    ['true', 'false', false],
    ['8', '= 4', true],
    ['2', '= 4', false],
    ['4', '== 4', true],
    ['4.0', '== 4', true],
    ['abc', '== 4', false],
    ['5', '!= 4', true],
    ['5', '>= 5', true],
    ['5', '<= 4', false],
    ['ssd,nvme', '<in> ssd', true],
    ['hdd', '<in> ssd', false],
    ['a b c', '<all-in> a c', true],
    ['a b', '<all-in> a c', false],
    ['v2', '<or> v1 <or> v2 <or> v3', true],
    ['v4', '<or> v1 <or> v2', false],
    ['abc', 's== abc', true],
    ['abd', 's> abc', true],
    ['abc', 's< abc', false],
    ['abc', 's!= abd', true],
    [undefined, '= 1', false],
    ['x', '=', false],
  ])('%j against %j is %s', (value, req, expected) => {
    expect(matchExtraSpec(value, req)).toBe(expected);
  });
});
