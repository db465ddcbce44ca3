import { ctx, hostState } from '../../../test/support/fixtures';
import { runFilters, summarizeReasons } from './filter-pipeline';
import { resolveFilters } from './registry';

describe('runFilters', () => {
  const hosts = [
    hostState({ uuid: 'a' }),
    hostState({ uuid: 'b', serviceDisabled: true }),
    hostState({ uuid: 'c', lastHeartbeatAt: undefined }),
    hostState({ uuid: 'd' }, undefined, 'az2'),
  ];

  it('runs filters in order on the survivors and records a diagnosis per filter', () => {
    const c = ctx({ spec: { ...ctx().spec, availabilityZone: 'az2' } });
    const out = runFilters(hosts, resolveFilters(['ComputeFilter', 'AvailabilityZoneFilter']), c);
    expect(out.hosts.map((h) => h.record.uuid)).toEqual(['d']);
    expect(out.diagnosis).toEqual([
      { filter: 'ComputeFilter', hostsBefore: 4, hostsAfter: 2, reason: 'compute service is disabled (1 host); compute service is down (1 host)' },
      { filter: 'AvailabilityZoneFilter', hostsBefore: 2, hostsAfter: 1, reason: 'host is not in availability zone az2 (1 host)' },
    ]);
  });

  it('stops at the first filter that leaves no host', () => {
    const c = ctx({ spec: { ...ctx().spec, availabilityZone: 'az9' } });
    const out = runFilters(hosts, resolveFilters(['AvailabilityZoneFilter', 'ComputeFilter']), c);
    expect(out.hosts).toEqual([]);
    expect(out.diagnosis.map((d) => d.filter)).toEqual(['AvailabilityZoneFilter']);
  });

  it('summarizes reasons most frequent first', () => {
    expect(summarizeReasons(['x', 'y', 'y'])).toBe('y (2 hosts); x (1 host)');
  });

  it('refuses unknown filter names, listing them all', () => {
    expect(() => resolveFilters(['ComputeFilter', 'RamFilter', 'CoreFilter'])).toThrow(/unknown filter RamFilter.*unknown filter CoreFilter/);
  });
});
