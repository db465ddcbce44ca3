import { ctx, hostState } from '../../../test/support/fixtures';
import { runFilters, summarizeReasons } from './filter-pipeline';
import { resolveFilters } from './registry';
import { fail, PASS, type HostFilter } from './types';

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
      {
        filter: 'ComputeFilter',
        hostsBefore: 4,
        hostsAfter: 2,
        reason: 'compute service is disabled (1 host); compute service is down (1 host)',
      },
      { filter: 'AvailabilityZoneFilter', hostsBefore: 2, hostsAfter: 1, reason: 'host is not in availability zone az2 (1 host)' },
    ]);
  });

  it('stops at the first filter that leaves no host', () => {
    const c = ctx({ spec: { ...ctx().spec, availabilityZone: 'az9' } });
    const out = runFilters(hosts, resolveFilters(['AvailabilityZoneFilter', 'ComputeFilter']), c);
    expect(out.hosts).toEqual([]);
    expect(out.diagnosis.map((d) => d.filter)).toEqual(['AvailabilityZoneFilter']);
  });

  it("does a filter's per-request work once per pass (forRequest), then asks it of every host", () => {
    const calls = { forRequest: 0, hostPasses: 0, perHost: 0 };
    const filter: HostFilter = {
      name: 'CountingFilter',
      hostPasses: () => {
        calls.hostPasses += 1;
        return PASS;
      },
      forRequest: () => {
        calls.forRequest += 1;
        return (h) => {
          calls.perHost += 1;
          return h.record.uuid === 'a' ? PASS : fail('not a');
        };
      },
    };
    const out = runFilters(hosts, [filter], ctx());
    expect(out.hosts.map((h) => h.record.uuid)).toEqual(['a']);
    expect(out.diagnosis).toEqual([{ filter: 'CountingFilter', hostsBefore: 4, hostsAfter: 1, reason: 'not a (3 hosts)' }]);
    expect(calls).toEqual({ forRequest: 1, hostPasses: 0, perHost: 4 });
  });

  it('summarizes reasons most frequent first', () => {
    expect(summarizeReasons(['x', 'y', 'y'])).toBe('y (2 hosts); x (1 host)');
  });

  it('refuses unknown filter names, listing them all', () => {
    expect(() => resolveFilters(['ComputeFilter', 'RamFilter', 'CoreFilter'])).toThrow(
      /unknown filter RamFilter.*unknown filter CoreFilter/,
    );
  });
});
