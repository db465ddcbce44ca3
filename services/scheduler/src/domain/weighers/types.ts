import type { SchedulingContext } from '../context';
import type { HostState } from '../host-state';

/**
 * Nova's BaseHostWeigher: a raw score per host (bigger is better before the multiplier). The
 * pipeline min-max normalizes the raw scores of one weigher over the hosts, then adds
 * `multiplier * normalized`. Contract: pure and deterministic, never throws for a valid host.
 */
export interface HostWeigher {
  /** Nova's class name, the key in `weight_classes`. */
  readonly name: string;
  /** Nova's option holding the multiplier (also an aggregate metadata key that overrides it). */
  readonly multiplierOption: string;
  readonly defaultMultiplier: number;
  weigh(host: HostState, ctx: SchedulingContext): number;
}
