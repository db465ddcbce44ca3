import { HostStatsTracker } from './host-stats';

describe('HostStatsTracker', () => {
  it('counts builds in flight, consecutive failures reset by a success, and hands changed hosts over once', () => {
    const t = new HostStatsTracker();
    t.buildStarted('h1');
    t.buildStarted('h1');
    expect(t.statsOf('h1', 0)).toMatchObject({ io_workload: '2', num_vm_building: '2', failed_builds: '0' });
    t.buildEnded('h1', false);
    t.buildEnded('h1', false);
    expect(t.statsOf('h1', 0)).toMatchObject({ io_workload: '0', failed_builds: '2' });
    expect(t.take()).toEqual(['h1']);
    expect(t.take()).toEqual([]);
    t.buildStarted('h1');
    t.buildEnded('h1', true);
    expect(t.statsOf('h1', 3)).toEqual({
      num_instances: '3',
      num_vm_active: '3',
      num_vm_building: '0',
      io_workload: '0',
      failed_builds: '0',
    });
    t.instancesChanged('h2');
    expect(t.take().sort()).toEqual(['h1', 'h2']);
  });
});
