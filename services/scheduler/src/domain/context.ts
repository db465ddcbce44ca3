import type { Flavor, ImageMeta, RequestSpec } from '@cellsched/wire';
import type { SchedulerPolicy } from './policy';

/** Nova's four server-group policies. */
export type GroupPolicy = 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';

/** A server group as one decision sees it, re-read under the group's lock and updated in-request. */
export interface GroupState {
  readonly uuid: string;
  readonly policy: GroupPolicy;
  /** Anti-affinity `max_server_per_host` rule (0 in the spec means 1). */
  readonly maxServerPerHost: number;
  /** Service host -> members of the group holding a claim there (this request's claims included). */
  readonly membersByHost: Map<string, number>;
}

/** Everything a host filter or weigher may read about the request. */
export interface SchedulingContext {
  readonly spec: RequestSpec;
  readonly flavor: Flavor;
  readonly image: ImageMeta | undefined;
  readonly group: GroupState | undefined;
  readonly policy: SchedulerPolicy;
  /** The decision's "now" (from the Clock port), so heartbeat ages are reproducible in tests. */
  readonly now: Date;
}

/** Members of the group on a service host (0 when none, or when the request has no group). */
export function groupMembersOnHost(ctx: SchedulingContext, host: string): number {
  return ctx.group?.membersByHost.get(host) ?? 0;
}
