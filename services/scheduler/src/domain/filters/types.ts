import type { SchedulingContext } from '../context';
import type { HostState } from '../host-state';

/** A host filter's answer. A failing host is expected, so it is a value with a reason, never a throw. */
export type FilterResult = { readonly pass: true } | { readonly pass: false; readonly reason: string };

export const PASS: FilterResult = Object.freeze({ pass: true });

/** A failing result with the reason a user will read in the NoValidHost diagnosis. */
export function fail(reason: string): FilterResult {
  return { pass: false, reason };
}

/**
 * Nova's BaseHostFilter (`host_passes`). Contract: pure and deterministic for a given host state
 * and context (the pipeline may call it again for the next instance of a multi-create); it never
 * throws for an unsuitable host, it answers `fail(reason)`.
 */
export interface HostFilter {
  /** Nova's class name, the key used in `enabled_filters`. */
  readonly name: string;
  hostPasses(host: HostState, ctx: SchedulingContext): FilterResult;
  /**
   * Optional, for a filter with per-request work (Nomad's SetJob): `hostPasses` with that work
   * done once for `ctx`, for the pipeline to call on every host of one pass. Must answer exactly
   * as `hostPasses(host, ctx)` does.
   */
  forRequest?(ctx: SchedulingContext): (host: HostState) => FilterResult;
}
