import { ctx, hostState, spec } from '../../../test/support/fixtures';
import { availabilityZoneFilter, hostAvailabilityZone } from './availability-zone-filter';

describe('AvailabilityZoneFilter', () => {
  it.each([
    ['no AZ requested', '', 'az1', true],
    ['same AZ', 'az1', 'az1', true],
    ['other AZ', 'az2', 'az1', false],
    ['one of several requested', 'az2,az1', 'az1', true],
    ['default AZ', 'nova', 'nova', true],
  ])('%s', (_n, requested, hostAz, pass) => {
    expect(
      availabilityZoneFilter.hostPasses(hostState({}, undefined, hostAz), ctx({ spec: spec({ availabilityZone: requested }) })).pass,
    ).toBe(pass);
  });

  it.each([
    ['no aggregate', [], 'nova'],
    ['aggregate without AZ', [{ uuid: 'a', name: 'a', metadata: { ssd: 'true' } }], 'nova'],
    ['one AZ', [{ uuid: 'a', name: 'a', metadata: { availability_zone: 'az1' } }], 'az1'],
    [
      'two aggregates, same AZ',
      [
        { uuid: 'a', name: 'a', metadata: { availability_zone: 'az1' } },
        { uuid: 'b', name: 'b', metadata: { availability_zone: 'az1' } },
      ],
      'az1',
    ],
  ])('host AZ: %s', (_n, aggs, az) => {
    expect(hostAvailabilityZone(aggs, 'nova')).toBe(az);
  });
});
