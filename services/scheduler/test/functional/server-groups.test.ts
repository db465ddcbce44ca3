/**
 * Server groups across two real scheduler replicas: 20 parallel boots into one anti-affinity
 * group land on 20 distinct hosts; into one affinity group, on one host. Members come from the
 * API DB, their hosts from placement's claims, decisions serialized by the advisory lock; a member
 * the decision could not see is still caught by placement's check at claim time.
 */
import { randomUUID } from 'node:crypto';
import { createInstanceGroup, type ServerGroupPolicy } from '@cellsched/api-db';
import { createGrpcClient } from '@cellsched/grpc';
import { PlacementServiceClient, type InstanceGroup } from '@cellsched/wire';
import { placementUsage } from '../../../../e2e/bench/scheduler/seed';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let clients: SchedulerClient[];

beforeAll(async () => {
  cloud = await startRealCloud('sched_groups');
  // 24 hosts of 30 VCPUs in 2 cells: room for every boot anywhere, so only the policy decides.
  await cloud.addHosts(Array.from({ length: 24 }, (_, i) => ({ host: `sg-${i}`, cell: i % 2, vcpus: 30, memoryMb: 65536, diskGb: 500 })));
  clients = [(await cloud.startReplica()).client, (await cloud.startReplica()).client];
});
afterAll(async () => {
  await cloud.close();
});

/** Creates the group with its 20 members in the API DB (as the API does), then boots them all at once over both replicas. */
async function parallelBoots(policy: ServerGroupPolicy): Promise<{ hosts: string[]; members: string[] }> {
  const members = Array.from({ length: 20 }, () => randomUUID());
  const { group } = await createInstanceGroup(cloud.apiDb.pool, { name: `g-${policy}`, userId: 'u1', projectId: 'p1', policy, members });
  // NOTE: the spec's member list is stale on purpose (empty): parallel boots cannot know each other.
  const wire: InstanceGroup = { uuid: group.uuid, policy, hosts: [], members: [], maxServerPerHost: 0 };
  const results = await Promise.all(
    members.map((m, i) => select(clients[i % 2] as SchedulerClient, requestSpec({ instanceGroup: wire, seed: i + 1 }), [m], 2)),
  );
  const hosts = results.map((r) => {
    if (!r.ok) throw r.err;
    return r.res.destinations[0]?.selections[0]?.serviceHost ?? '';
  });
  return { hosts, members };
}

test('20 parallel boots into one anti-affinity group over 2 replicas land on 20 distinct hosts', async () => {
  const { hosts, members } = await parallelBoots('anti-affinity');
  expect(new Set(hosts).size).toBe(20);
  const usage = await placementUsage(cloud.placementDb.pool);
  expect(members.every((m) => usage.consumers.get(m)?.length === 1)).toBe(true);
  expect(new Set(members.map((m) => usage.consumers.get(m)?.[0])).size).toBe(20);
});

test('20 parallel boots into one affinity group over 2 replicas land on one host', async () => {
  const { hosts } = await parallelBoots('affinity');
  expect(new Set(hosts).size).toBe(1);
});

test("a member placed outside the decision's view (a cell conductor's reschedule) is caught by placement at claim time: the next host is claimed", async () => {
  const big = randomUUID();
  // the heaviest host by far: every decision's first choice
  await cloud.addHosts([{ host: 'sg-big', cell: 0, vcpus: 256, memoryMb: 1_048_576, diskGb: 5000, uuid: big }]);
  await new Promise((resolve) => setTimeout(resolve, 3000)); // the replicas' candidate copies are refreshed every 2 s
  const placement = createGrpcClient(PlacementServiceClient, { addresses: [cloud.placement.address], deadlineMs: 10_000, maxAttempts: 1 });
  try {
    const control = await select(clients[0] as SchedulerClient, requestSpec({ seed: 11 }), [randomUUID()]);
    expect(control.ok && control.res.destinations[0]?.selections[0]?.serviceHost).toBe('sg-big');

    const newcomer = randomUUID();
    const { group } = await createInstanceGroup(cloud.apiDb.pool, {
      name: 'g-late',
      userId: 'u1',
      projectId: 'p1',
      policy: 'anti-affinity',
      members: [newcomer],
    });
    const wire: InstanceGroup = { uuid: group.uuid, policy: 'anti-affinity', hosts: [], members: [], maxServerPerHost: 0 };
    // NOTE: a member the decision cannot see (not in the API DB's list it reads under the group lock), claimed on sg-big with the
    // group as the cell conductor's reschedule claims: the same as a member that moved there after the decision read the members.
    const hidden = randomUUID();
    await placement.claim({
      consumer: {
        consumerUuid: hidden,
        projectId: 'p1',
        userId: 'u1',
        consumerType: 'INSTANCE',
        allocations: [{ resourceProviderUuid: big, resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 } }],
      },
      replace: true,
      group: { uuid: group.uuid, policy: 'anti-affinity', maxServerPerHost: 0 },
    });

    const r = await select(clients[1] as SchedulerClient, requestSpec({ instanceGroup: wire, seed: 11 }), [newcomer], 2);
    if (!r.ok) throw r.err;
    expect(r.res.destinations[0]?.selections[0]?.serviceHost).not.toBe('sg-big');
    const usage = await placementUsage(cloud.placementDb.pool);
    expect(usage.consumers.get(newcomer)).toHaveLength(1);
    expect(usage.consumers.get(newcomer)).not.toContain(big);
    expect(usage.consumers.get(hidden)).toEqual([big]);
  } finally {
    placement.close();
  }
});
