/**
 * The server-group side of the gRPC claim (migration 007): the statements that run a claim for a
 * member of a group, and the refusal they raise when the group's policy forbids the claim.
 */
import { PlacementError } from '../../domain/errors';
import type { ClaimGroup } from '../../domain/server-group';

/** What `placement_claim_in_group` reports about the member that breaks the policy. */
export interface GroupPolicyBreach {
  readonly groupUuid: string;
  readonly policy: ClaimGroup['policy'];
  readonly maxServerPerHost: number;
  /** The compute node (root provider) concerned: where the members already are (anti-affinity) or where one is (affinity). */
  readonly rootProviderUuid: string;
  readonly rootProviderName: string;
  /** Other members holding allocations on that compute node. */
  readonly members: number;
  /** One of them (the lowest uuid). */
  readonly memberUuid: string;
}

/**
 * A claim refused because it would break its server group's policy (nothing written). Only the
 * gRPC claim carries a group, so REST never answers it; gRPC maps it to FAILED_PRECONDITION
 * `placement.claim.group_policy`. Retrying the same claim is pointless until the other member
 * moves or is deleted; another host may fit.
 */
export class GroupPolicyConflict extends PlacementError {
  constructor(
    readonly breach: GroupPolicyBreach,
    readonly consumerUuid: string,
  ) {
    super(409, groupPolicyDetail(breach, consumerUuid));
  }
}

function groupPolicyDetail(b: GroupPolicyBreach, consumer: string): string {
  const node = `compute node '${b.rootProviderName}' (${b.rootProviderUuid})`;
  if (b.policy === 'affinity') {
    return `Unable to claim for consumer ${consumer}: server group ${b.groupUuid} has the affinity policy and its member ${b.memberUuid} is on ${node}, not on the host claimed.`;
  }
  const most = b.maxServerPerHost === 1 ? 'one member per host' : `at most ${b.maxServerPerHost} members per host`;
  return (
    `Unable to claim for consumer ${consumer}: server group ${b.groupUuid} has the anti-affinity policy (${most}) and ${node} ` +
    `already holds ${b.members === 1 ? `its member ${b.memberUuid}` : `${b.members} of its members (${b.memberUuid}, ...)`}.`
  );
}

/** The refusal JSON `placement_claim_in_group` raises (after 'placement_claim:'). */
export interface GroupRefusal {
  readonly kind: 'group_policy';
  readonly group: string;
  readonly policy: ClaimGroup['policy'];
  readonly max: number;
  readonly root: string;
  readonly root_name: string;
  readonly members: number;
  readonly member: string;
}

/** The error for a `group_policy` refusal of the claim function. */
export function groupRefusalError(r: GroupRefusal, consumerUuid: string): GroupPolicyConflict {
  return new GroupPolicyConflict(
    {
      groupUuid: r.group,
      policy: r.policy,
      maxServerPerHost: r.max,
      rootProviderUuid: r.root,
      rootProviderName: r.root_name,
      members: r.members,
      memberUuid: r.member,
    },
    consumerUuid,
  );
}

/** The lone grouped claim: `placement_claim`'s nine arguments after the group's three ($1-$3). */
export const CLAIM_IN_GROUP_SQL =
  'SELECT placement_claim_in_group($1::uuid, $2, $3, $4::uuid, $5, $6, $7, $8, $9, $10::uuid[], $11::text[], $12::int[]) AS g';

/** A batch holding at least one grouped claim (a batch without any keeps `placement_claim_many`). */
export const CLAIM_MANY_IN_GROUPS_SQL =
  'SELECT i, generation, refusal, error_state, error_message FROM placement_claim_many_in_groups($1::jsonb)';

/** The group's arguments of `placement_claim_in_group`, in order. */
export function groupArgs(g: ClaimGroup): [string, string, number] {
  return [g.uuid, g.policy, g.maxServerPerHost];
}

/** The group's keys of one claim of `placement_claim_many_in_groups` (none for a claim without a group). */
export function groupKeys(g: ClaimGroup | undefined): { gu?: string; gp?: string; gm?: number } {
  return g === undefined ? {} : { gu: g.uuid, gp: g.policy, gm: g.maxServerPerHost };
}
