import { fakeCloud } from '../../test/support/fake-cloud';
import { flavor, spec } from '../../test/support/fixtures';
import { DEFAULT_POLICY } from './policy';
import { SchedulerCore, type SelectDestinationsResult } from './select-destinations';

// An in-memory race: several replicas (separate cores sharing one placement that enforces capacity
// atomically) take many concurrent single-instance requests into a cloud that fits exactly N.
describe('race: concurrent requests from several replicas', () => {
  it.each([
    // [replicas, hosts per cell (2 cells), instances per host, requests, host_subset_size]
    [4, 25, 6, 400, 1],
    [3, 10, 4, 120, 5],
  ])(
    '%i replicas, 2x%i hosts fitting %i each, %i requests (subset %i): exactly N claims, the rest NoValidHost',
    async (replicas, hostsPerCell, perHost, requests, subset) => {
      const seed = 20261122;
      process.stdout.write(`race seed ${seed}\n`);
      const cloud = fakeCloud(2, hostsPerCell, { VCPU: perHost, MEMORY_MB: perHost * 1024, DISK_GB: perHost * 10 });
      const capacity = 2 * hostsPerCell * perHost;
      const cores = Array.from({ length: replicas }, () => new SchedulerCore(cloud.ports, { ...DEFAULT_POLICY, hostSubsetSize: subset }));
      const results: SelectDestinationsResult[] = await Promise.all(
        Array.from({ length: requests }, (_, i) =>
          (cores[i % replicas] as SchedulerCore).selectDestinations({
            spec: spec({ flavor: flavor({ vcpus: 1, memoryMb: 1024, rootGb: 10 }), seed: seed + i }),
            instanceUuids: [`vm-${i}`],
            numAlternates: 2,
            allocationRequestVersion: '1.36',
          }),
        ),
      );
      const ok = results.filter((r) => r.kind === 'selected');
      const retries = results.reduce((n, r) => n + r.claimRetries, 0);
      process.stdout.write(
        `race: ${ok.length} claims, ${requests - ok.length} NoValidHost, ${retries} conflict retries, ${cloud.placement.stats.conflicts} conflicts\n`,
      );
      expect(ok).toHaveLength(capacity);
      expect(results.filter((r) => r.kind === 'no_valid_host')).toHaveLength(requests - capacity);
      expect(cloud.placement.overCapacity()).toEqual([]);
      expect(cloud.placement.allocations.size).toBe(capacity);
      for (const [i, r] of results.entries()) {
        const held = cloud.placement.allocations.get(`vm-${i}`);
        if (r.kind === 'selected') expect([...(held?.keys() ?? [])]).toEqual([r.destinations[0]?.[0]?.computeNodeUuid]);
        else expect(held).toBeUndefined();
      }
      expect(retries).toBeLessThanOrEqual(cloud.placement.stats.conflicts);
      expect(cloud.placement.stats.conflicts).toBeGreaterThan(0);
    },
  );
});
