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

/**
 * Where the instances named by the request's `same_host` / `different_host` scheduler hints are:
 * the service hosts on which they hold claims, read once per decision. A hint that is absent is
 * undefined; a hint naming only unknown or unplaced instances is an empty set.
 */
export interface HintedHosts {
  readonly sameHost?: ReadonlySet<string>;
  readonly differentHost?: ReadonlySet<string>;
}

/** The instance uuids of a `same_host` / `different_host` hint (the API joins a list with commas), or [] without it. */
export function hintedInstances(spec: RequestSpec, hint: 'same_host' | 'different_host'): string[] {
  const value = spec.schedulerHints[hint];
  return value === undefined
    ? []
    : value
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
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
  /** Where the `same_host` / `different_host` hints' instances are (absent: no such hint). */
  readonly hinted?: HintedHosts;
}

/** Members of the group on a service host (0 when none, or when the request has no group). */
export function groupMembersOnHost(ctx: SchedulingContext, host: string): number {
  return ctx.group?.membersByHost.get(host) ?? 0;
}
