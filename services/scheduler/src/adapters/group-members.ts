import { getInstanceGroup, type Queryable as ApiDb } from '@cellsched/api-db';
import type { InstanceGroup } from '@cellsched/wire';
import type { ComputeNodeRecord } from '../ports';
import type { PlacementClient } from '@cellsched/placement-client';

/** Resolves compute node (root provider) uuids to their records. */
export type NodeLookup = (uuids: readonly string[]) => Promise<ReadonlyMap<string, ComputeNodeRecord>>;

/**
 * The service hosts each consumer holds a claim on: placement's allocations of the consumer
 * (GetConsumerAllocations), mapped to the service host through the compute node records. A
 * consumer without allocations is on no host. An allocation on a provider that is not a known
 * compute node (a nested or sharing provider) is ignored: only root providers name a host.
 * Read-only; safe to retry.
 */
function consumerHosts(placement: PlacementClient, lookup: NodeLookup) {
  return async (consumers: readonly string[]): Promise<Set<string>[]> => {
    const held = await Promise.all(
      consumers.map(async (m) => {
        const held = await placement.consumerAllocations(m);
        return (held?.allocations ?? []).map((a) => a.resourceProviderUuid);
      }),
    );
    const nodes = await lookup([...new Set(held.flat())]);
    return held.map((providers) => new Set(providers.map((p) => nodes.get(p)?.host).filter((h): h is string => h !== undefined)));
  };
}

/**
 * The port's `getGroupMemberHosts`, read fresh under the group lock: the members are the API DB's
 * `instance_group_member` rows (plus the spec's, in case the group row is not visible yet), and
 * where each holds a claim comes from placement ({@link consumerHosts}). Members in `exclude` (a
 * moving instance) are not counted. Read-only; safe to retry.
 */
export function groupMemberHosts(apiDb: ApiDb, placement: PlacementClient, lookup: NodeLookup) {
  const hostsOf = consumerHosts(placement, lookup);
  return async (group: InstanceGroup, exclude: readonly string[] = []): Promise<ReadonlyMap<string, number>> => {
    const row = await getInstanceGroup(apiDb, group.uuid);
    const members = [...new Set([...group.members, ...(row?.members ?? [])])].filter((m) => !exclude.includes(m));
    const byHost = new Map<string, number>();
    for (const hosts of await hostsOf(members)) {
      for (const h of hosts) byHost.set(h, (byHost.get(h) ?? 0) + 1);
    }
    return byHost;
  };
}

/** The port's `getInstanceHosts`: the service hosts on which any of these instances holds a claim ({@link consumerHosts}). */
export function instanceHosts(placement: PlacementClient, lookup: NodeLookup) {
  const hostsOf = consumerHosts(placement, lookup);
  return async (instanceUuids: readonly string[]): Promise<ReadonlySet<string>> =>
    new Set((await hostsOf([...new Set(instanceUuids)])).flatMap((h) => [...h]));
}
