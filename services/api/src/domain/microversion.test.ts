import { ApiError } from './errors';
import { atLeast, negotiate, requestedVersion } from './microversion';

describe('requestedVersion', () => {
  it.each([
    [{ 'openstack-api-version': 'compute 2.37' }, '2.37'],
    [{ 'openstack-api-version': 'placement 1.2, compute 2.10' }, '2.10'],
    [{ 'openstack-api-version': 'placement 1.2' }, undefined],
    [{ 'x-openstack-nova-api-version': '2.5' }, '2.5'],
    [{ 'openstack-api-version': 'compute 2.6', 'x-openstack-nova-api-version': '2.5' }, '2.6'],
    [{}, undefined],
  ])('%j → %s', (headers, expected) => {
    expect(requestedVersion(headers)).toBe(expected);
  });
});

describe('negotiate', () => {
  it('defaults to 2.1, maps latest to the maximum and accepts the range', () => {
    expect(negotiate(undefined)).toEqual({ major: 2, minor: 1 });
    expect(negotiate('latest')).toEqual({ major: 2, minor: 69 });
    expect(negotiate('2.69')).toEqual({ major: 2, minor: 69 });
    expect(negotiate('2.37')).toEqual({ major: 2, minor: 37 });
  });

  it.each([
    ['2.70', 406],
    ['3.0', 406],
    ['2.0', 406],
    ['1.9', 406],
    ['2.x', 400],
    ['2.01', 400],
    ['', undefined],
  ])('%s → %s', (v, status) => {
    if (status === undefined) {
      expect(negotiate(v)).toEqual({ major: 2, minor: 1 });
      return;
    }
    expect(() => negotiate(v)).toThrow(ApiError);
    try {
      negotiate(v);
    } catch (e) {
      expect((e as ApiError).status).toBe(status);
    }
  });

  it('compares minors', () => {
    expect(atLeast({ major: 2, minor: 37 }, 37)).toBe(true);
    expect(atLeast({ major: 2, minor: 36 }, 37)).toBe(false);
  });
});
