import type { InstanceGroup } from '@cellsched/wire';
import { fakeCloud } from '../../test/support/fake-cloud';
import { flavor, spec } from '../../test/support/fixtures';
import { DEFAULT_POLICY, type SchedulerPolicy } from './policy';
import { SchedulerCore, type SelectDestinationsResult } from './select-destinations';

const SMALL = flavor({ vcpus: 1, memoryMb: 1024, rootGb: 10 });
const ROOMY = { VCPU: 32, MEMORY_MB: 32768, DISK_GB: 1000 };

function group(policy: string, maxServerPerHost = 0): InstanceGroup {
  // NOTE: members is stale on purpose, as in a parallel boot: only the lock-time re-read is current.
  return { uuid: 'group-1', policy, hosts: [], members: [], maxServerPerHost };
}

/** Parallel single-instance boots into one group, spread over `replicas` scheduler cores sharing the fakes. */
async function parallelBoots(
  cloud: ReturnType<typeof fakeCloud>,
  g: InstanceGroup,
  boots: number,
  replicas = 2,
  policy: Partial<SchedulerPolicy> = {},
): Promise<SelectDestinationsResult[]> {
  const cores = Array.from({ length: replicas }, () => new SchedulerCore(cloud.ports, { ...DEFAULT_POLICY, hostSubsetSize: 3, ...policy }));
  const members = new Set<string>();
  cloud.snapshot.groupMembers.set(g.uuid, members);
  return Promise.all(
    Array.from({ length: boots }, (_, i) => {
      members.add(`vm-${i}`);
      return (cores[i % replicas] as SchedulerCore).selectDestinations({
        spec: spec({ flavor: SMALL, instanceGroup: g, seed: 1000 + i }),
        instanceUuids: [`vm-${i}`],
        numAlternates: 2,
        allocationRequestVersion: '1.36',
      });
    }),
  );
}

function hostsOf(results: SelectDestinationsResult[]): string[] {
  return results.flatMap((r) => (r.kind === 'selected' ? r.destinations.map((d) => d[0]?.serviceHost ?? '') : []));
}

describe('server groups under parallel boots', () => {
  it('20 parallel boots into one anti-affinity group across 2 replicas land on 20 distinct hosts', async () => {
    const cloud = fakeCloud(2, 15, ROOMY);
    const results = await parallelBoots(cloud, group('anti-affinity'), 20);
    const hosts = hostsOf(results);
    expect(hosts).toHaveLength(20);
    expect(new Set(hosts).size).toBe(20);
    expect(cloud.lock.maxHolders).toBe(1);
    expect(cloud.lock.acquisitions).toBe(20);
  });

  it('alternates of an anti-affinity boot hold no member of the group either', async () => {
    const cloud = fakeCloud(1, 12, ROOMY);
    const results = await parallelBoots(cloud, group('anti-affinity'), 4);
    const chosen = new Set(hostsOf(results));
    const last = results.at(-1);
    expect(last?.kind).toBe('selected');
    for (const alt of last?.kind === 'selected' ? (last.destinations[0]?.slice(1) ?? []) : [])
      expect(chosen.has(alt.serviceHost)).toBe(false);
  });

  it('20 parallel boots into one affinity group land on one host, with no alternates elsewhere', async () => {
    const cloud = fakeCloud(2, 15, ROOMY);
    const results = await parallelBoots(cloud, group('affinity'), 20);
    expect(hostsOf(results)).toHaveLength(20);
    expect(new Set(hostsOf(results)).size).toBe(1);
    const later = results.slice(1).flatMap((r) => (r.kind === 'selected' ? r.destinations.flatMap((d) => d.slice(1)) : []));
    expect(later).toEqual([]);
  });

  it('anti-affinity beyond the number of hosts answers NoValidHost naming the filter', async () => {
    const cloud = fakeCloud(1, 3, ROOMY);
    const results = await parallelBoots(cloud, group('anti-affinity'), 5);
    expect(new Set(hostsOf(results)).size).toBe(3);
    const failed = results.filter((r) => r.kind === 'no_valid_host');
    expect(failed).toHaveLength(2);
    for (const f of failed) {
      expect(f.kind === 'no_valid_host' && f.diagnosis.at(-1)).toMatchObject({
        filter: 'ServerGroupAntiAffinityFilter',
        hostsBefore: 3,
        hostsAfter: 0,
      });
    }
    expect(cloud.placement.allocations.size).toBe(3);
  });

  it('honours max_server_per_host', async () => {
    const cloud = fakeCloud(1, 3, ROOMY);
    const hosts = hostsOf(await parallelBoots(cloud, group('anti-affinity', 2), 6));
    const counts = [...new Set(hosts)].map((h) => hosts.filter((x) => x === h).length);
    expect(counts).toEqual([2, 2, 2]);
  });

  it('a multi-create into an anti-affinity group spreads its own instances', async () => {
    const cloud = fakeCloud(1, 4, ROOMY);
    const core = new SchedulerCore(cloud.ports);
    const r = await core.selectDestinations({
      spec: spec({ flavor: SMALL, instanceGroup: group('anti-affinity') }),
      instanceUuids: ['a', 'b', 'c'],
      numAlternates: 0,
      allocationRequestVersion: '',
    });
    expect(new Set(hostsOf([r])).size).toBe(3);
  });

  it('soft-affinity gathers and soft-anti-affinity spreads, without refusing anyone', async () => {
    const soft = { weightMultipliers: { soft_affinity_weight_multiplier: 10, soft_anti_affinity_weight_multiplier: 10 } };
    const together = hostsOf(await parallelBoots(fakeCloud(1, 4, ROOMY), group('soft-affinity'), 6, 2, { ...soft, hostSubsetSize: 1 }));
    expect(new Set(together).size).toBe(1);
    const apart = hostsOf(await parallelBoots(fakeCloud(1, 4, ROOMY), group('soft-anti-affinity'), 6, 2, { ...soft, hostSubsetSize: 1 }));
    expect(apart).toHaveLength(6);
    expect(new Set(apart).size).toBe(4);
  });

  it('every claim carries the group; a host placement refuses for the policy is skipped (no fresh read), and when all are refused the diagnosis says so', async () => {
    const cloud = fakeCloud(1, 3, ROOMY);
    const core = new SchedulerCore(cloud.ports, DEFAULT_POLICY);
    const g = group('anti-affinity');
    cloud.snapshot.groupMembers.set(g.uuid, new Set(['vm-a']));
    const req = (seed: number) => ({
      spec: spec({ flavor: SMALL, instanceGroup: g, seed }),
      instanceUuids: ['vm-a'],
      numAlternates: 0,
      allocationRequestVersion: '1.36',
    });
    const first = await core.selectDestinations(req(1));
    const firstHost = first.kind === 'selected' ? (first.destinations[0]?.[0]?.computeNodeUuid ?? '') : '';
    await cloud.placement.release(['vm-a']);
    // placement now knows a member on the host this decision prefers (one it cannot see): that host is skipped
    cloud.placement.groupRefusals.add(firstHost);
    const queries = cloud.placement.stats.queries;
    const again = await core.selectDestinations(req(1));
    expect(again.kind).toBe('selected');
    expect(again.kind === 'selected' && again.destinations[0]?.[0]?.computeNodeUuid).not.toBe(firstHost);
    expect(cloud.placement.stats.queries).toBe(queries + 1); // the candidates read only, no refresh after the refusal
    expect(new Set(cloud.placement.claimGroups)).toEqual(new Set([g.uuid]));
    for (const rp of cloud.placement.providers.keys()) cloud.placement.groupRefusals.add(rp);
    await cloud.placement.release(['vm-a']);
    const none = await core.selectDestinations(req(1));
    expect(none.kind).toBe('no_valid_host');
    expect(none.kind === 'no_valid_host' && none.diagnosis.at(-1)).toMatchObject({
      filter: 'placement_claim',
      hostsBefore: 3,
      hostsAfter: 0,
      reason: 'server group policy refused by placement (3 hosts)',
    });
  });
});
