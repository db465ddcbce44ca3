import type { HostAggregate } from '../host-state';
import { ctx, flavor, hostState, spec } from '../../../test/support/fixtures';
import { aggregateInstanceExtraSpecsFilter, scopedKey } from './aggregate-instance-extra-specs-filter';

const agg = (metadata: Record<string, string>): HostAggregate => ({ uuid: 'a', name: 'a', metadata });

describe('AggregateInstanceExtraSpecsFilter', () => {
  it.each<[string, Record<string, string>, HostAggregate[], boolean]>([
    ['no extra specs', {}, [], true],
    ['scoped key matched', { 'aggregate_instance_extra_specs:ssd': 'true' }, [agg({ ssd: 'true' })], true],
    ['scoped key mismatched', { 'aggregate_instance_extra_specs:ssd': 'true' }, [agg({ ssd: 'false' })], false],
    ['scoped key missing on host', { 'aggregate_instance_extra_specs:ssd': 'true' }, [], false],
    ['unscoped key counts too (as in Nova)', { ssd: 'true' }, [agg({ ssd: 'true' })], true],
    ['unscoped key missing', { ssd: 'true' }, [], false],
    ['other scopes ignored', { 'hw:cpu_policy': 'dedicated', 'resources:VCPU': '2', 'trait:X': 'required' }, [], true],
    [
      'any aggregate value may match',
      { 'aggregate_instance_extra_specs:tier': 'gold' },
      [agg({ tier: 'silver' }), agg({ tier: 'gold' })],
      true,
    ],
    ['operators work', { 'aggregate_instance_extra_specs:cores': '>= 16' }, [agg({ cores: '32' })], true],
  ])('%s', (_n, extraSpecs, aggregates, pass) => {
    const c = ctx({ spec: spec({ flavor: flavor({ extraSpecs }) }) });
    expect(aggregateInstanceExtraSpecsFilter.hostPasses(hostState({ aggregates }), c).pass).toBe(pass);
  });

  it.each([
    ['ssd', 'ssd'],
    ['aggregate_instance_extra_specs:ssd', 'ssd'],
    ['hw:foo', undefined],
  ])('scope of %s', (key, expected) => {
    expect(scopedKey(key)).toBe(expected);
  });
});
