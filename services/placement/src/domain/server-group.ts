/**
 * The server group a claim's consumer belongs to (Nova's InstanceGroup, as the gRPC Claim carries
 * it), and which of its policies placement enforces at claim time. Pure.
 */

/** Nova's four server-group policies. */
export const SERVER_GROUP_POLICIES = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'] as const;
export type ServerGroupPolicy = (typeof SERVER_GROUP_POLICIES)[number];

/** The policies placement enforces; the soft-* ones are only weighed by the scheduler, as in Nova. */
export type EnforcedGroupPolicy = 'affinity' | 'anti-affinity';

/** A group whose policy a claim must keep. */
export interface ClaimGroup {
  readonly uuid: string;
  readonly policy: EnforcedGroupPolicy;
  /** Anti-affinity: most members per compute node, this one included (>= 1). Affinity: 1. */
  readonly maxServerPerHost: number;
}

/** A group as the request gives it: policy not yet checked, `maxServerPerHost` 0 meaning 1. */
export interface GroupInput {
  readonly uuid: string;
  readonly policy: string;
  readonly maxServerPerHost: number;
}

/** What is wrong with a group input (empty: nothing); `uuid` is checked by the caller. */
export function groupProblems(g: GroupInput): string[] {
  const problems: string[] = [];
  if (!(SERVER_GROUP_POLICIES as readonly string[]).includes(g.policy)) {
    problems.push(`group.policy must be one of ${SERVER_GROUP_POLICIES.join(', ')}, got '${g.policy}'`);
  }
  if (!Number.isSafeInteger(g.maxServerPerHost) || g.maxServerPerHost < 0) {
    problems.push(`group.max_server_per_host must be an integer >= 0, got ${g.maxServerPerHost}`);
  } else if (g.maxServerPerHost > 1 && g.policy !== 'anti-affinity') {
    problems.push(`group.max_server_per_host applies to the anti-affinity policy only, got ${g.maxServerPerHost} with '${g.policy}'`);
  }
  return problems;
}

/**
 * The group a claim must keep the policy of, or undefined when its policy is not enforced
 * (soft-*). The input must be valid ({@link groupProblems} empty).
 */
export function enforcedGroup(g: GroupInput): ClaimGroup | undefined {
  if (g.policy !== 'affinity' && g.policy !== 'anti-affinity') return undefined;
  return { uuid: g.uuid, policy: g.policy, maxServerPerHost: g.policy === 'anti-affinity' ? Math.max(1, g.maxServerPerHost) : 1 };
}
