import { repr } from './action-schema';

// Nova's availability zone rules for host aggregates (nova/compute/api.py AggregateAPI:
// is_safe_to_update_az and the checks that no instance changes zone). Pure: the caller reads
// the aggregates and the instance counts.

/** What these rules read of an aggregate. */
export interface ZonedAggregate {
  readonly id: number;
  readonly name: string;
  readonly hosts: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** The action a refusal is reported for, as Nova's InvalidAggregateAction* name it. */
export type AggregateAction = 'add' | 'remove' | 'update' | 'update_metadata';

const PREFIX: Readonly<Record<AggregateAction, string>> = {
  add: 'Cannot add host to aggregate',
  remove: 'Cannot remove host from aggregate',
  update: 'Cannot update aggregate',
  update_metadata: 'Cannot update metadata of aggregate',
};

/** Nova's InvalidAggregateAction* message. */
export const invalidAggregateAction = (action: AggregateAction, id: number, reason: string): string =>
  `${PREFIX[action]} ${id}. Reason: ${reason}.`;

const zoneOf = (a: Pick<ZonedAggregate, 'metadata'>): string | undefined => a.metadata.availability_zone;

/**
 * Nova's `is_safe_to_update_az`: the reason `zone` may not be given to `aggregate` (with
 * `hosts`, default its own), or undefined when it may. `instancesOnHosts` is asked only when
 * the zone changes and `checkInstances` is set.
 */
export async function zoneRefusal(
  zone: string | null,
  aggregate: ZonedAggregate,
  all: readonly ZonedAggregate[],
  opts: { hosts?: readonly string[]; checkInstances?: boolean; instancesOnHosts?: (hosts: readonly string[]) => Promise<number> },
): Promise<string | undefined> {
  if (zone === null || zone === '') return `Aggregate ${aggregate.name} does not support empty named availability zone`;
  const hosts = opts.hosts !== undefined && opts.hosts.length > 0 ? opts.hosts : aggregate.hosts;
  const conflicting = all
    .filter((a) => a.id !== aggregate.id && zoneOf(a) !== undefined && zoneOf(a) !== zone && a.hosts.some((h) => hosts.includes(h)))
    .map((a) => zoneOf(a) as string);
  if (conflicting.length > 0) return `One or more hosts already in availability zone(s) [${conflicting.map(repr).join(', ')}]`;
  if (
    opts.checkInstances === true &&
    zoneOf(aggregate) !== zone &&
    opts.instancesOnHosts !== undefined &&
    (await opts.instancesOnHosts(hosts)) > 0
  ) {
    return 'One or more hosts contain instances in this zone';
  }
  return undefined;
}

/** Python's `%s` of an optional zone. */
const py = (z: string | undefined): string => z ?? 'None';

/**
 * Nova's `ensure_no_instances_need_to_move_az_when_host_added` / `_removed`: the reason the
 * host's `instances` would change zone, or undefined. `hostAggregates` are the host's
 * aggregates before the change.
 */
export function zoneMoveRefusal(
  change: 'add' | 'remove',
  aggregate: ZonedAggregate,
  hostAggregates: readonly ZonedAggregate[],
  instances: number,
): string | undefined {
  const zone = zoneOf(aggregate);
  if (instances === 0 || zone === undefined) return undefined;
  const others = hostAggregates
    .filter((a) => change === 'add' || a.id !== aggregate.id)
    .map(zoneOf)
    .filter((z): z is string => z !== undefined);
  const before = change === 'add' ? others[0] : zone;
  const after = change === 'add' ? zone : others[0];
  if (before === after) return undefined;
  return (
    `The host cannot be ${change === 'add' ? 'added to' : 'removed from'} the aggregate as the availability zone of the host would change from '${py(before)}' to '${py(after)}' ` +
    `but the host already has ${instances} instance(s). Changing the AZ of an existing instance is not supported by this action. Move the instances away from this host then try again. ` +
    'If you need to move the instances between AZs then you can use shelve_offload and unshelve to achieve this.'
  );
}
