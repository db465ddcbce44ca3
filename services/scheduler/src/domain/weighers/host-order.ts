import { type Prng, shuffled } from '../prng';
import type { WeighedHost } from './weigh-hosts';

/**
 * Nova's `_get_sorted_hosts` after weighing: optionally shuffle the hosts tied for the best weight
 * (`shuffle_best_same_weighed_hosts`), then pick one of the best `host_subset_size` at random and
 * put it first; the rest keep their weighed order (they are the fallbacks if the claim fails).
 * Every random draw comes from the request's seeded PRNG.
 */
export function orderForClaim(weighed: readonly WeighedHost[], hostSubsetSize: number, shuffleBest: boolean, rng: Prng): WeighedHost[] {
  let ordered = weighed.slice();
  if (shuffleBest && ordered.length > 1) {
    const best = ordered[0]?.weight;
    const ties = ordered.filter((w) => w.weight === best);
    ordered = [...shuffled(ties, rng), ...ordered.slice(ties.length)];
  }
  const subset = Math.min(hostSubsetSize, ordered.length);
  if (subset <= 1) return ordered;
  const index = rng.int(subset);
  const chosen = ordered[index] as WeighedHost;
  return [chosen, ...ordered.slice(0, index), ...ordered.slice(index + 1)];
}
