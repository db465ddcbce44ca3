import type { InstanceGroup } from '@cellsched/wire';
import type { GroupPolicy, GroupState } from '../context';

/**
 * The group as the decision sees it: members' hosts as re-read under the group lock (a fresh
 * copy: the request's own claims are added to it in memory as they are made).
 */
export function groupState(group: InstanceGroup, memberHosts: ReadonlyMap<string, number>): GroupState {
  return {
    uuid: group.uuid,
    policy: group.policy as GroupPolicy,
    maxServerPerHost: group.maxServerPerHost > 0 ? group.maxServerPerHost : 1,
    membersByHost: new Map(memberHosts),
  };
}

/** Records a new member claimed on a service host (in-request consumption for group policies). */
export function addGroupMember(group: GroupState | undefined, host: string): void {
  if (group !== undefined) group.membersByHost.set(host, (group.membersByHost.get(host) ?? 0) + 1);
}
