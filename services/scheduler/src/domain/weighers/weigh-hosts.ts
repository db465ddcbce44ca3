import type { SchedulingContext } from '../context';
import type { HostState } from '../host-state';
import { weightMultiplier } from './multiplier';
import type { HostWeigher } from './types';

/** A host and its total weight (sum over weighers of multiplier * normalized score). */
export interface WeighedHost {
  readonly host: HostState;
  weight: number;
}

/** Nova's normalize: min-max to [0, 1]; all equal -> all 0. */
export function normalize(values: readonly number[]): number[] {
  if (values.length === 0) return [];
  const min = Math.min(...values);
  const max = Math.max(...values);
  if (min === max) return values.map(() => 0);
  return values.map((v) => (v - min) / (max - min));
}

/**
 * Nova's weight handler: each weigher's raw scores are normalized over the hosts, multiplied by
 * its (possibly aggregate-overridden) multiplier and summed. Returns the hosts heaviest first; the
 * sort is stable, so equal weights keep the input order (the caller shuffles that with the seed).
 */
export function weighHosts(
  hosts: readonly HostState[],
  weighers: readonly HostWeigher[],
  multipliers: Readonly<Record<string, number>>,
  ctx: SchedulingContext,
): WeighedHost[] {
  const weighed: WeighedHost[] = hosts.map((host) => ({ host, weight: 0 }));
  for (const weigher of weighers) {
    const configured = multipliers[weigher.multiplierOption] ?? weigher.defaultMultiplier;
    const scores = normalize(hosts.map((h) => weigher.weigh(h, ctx)));
    weighed.forEach((w, i) => {
      w.weight += weightMultiplier(w.host, weigher.multiplierOption, configured) * (scores[i] ?? 0);
    });
  }
  return weighed.sort((a, b) => b.weight - a.weight);
}
