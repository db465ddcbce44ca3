import { mulberry32 } from '@cellsched/prng';

/**
 * A small seeded PRNG (mulberry32 over a 32-bit fold of the request's uint64 seed), so that
 * ties, shuffles and host subsets are replayable: the same seed gives the same choices.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
}

/** Creates a PRNG from a non-negative integer seed (JS number up to 2^53), folded to 32 bits. */
export function seededPrng(seed: number): Prng {
  const next = mulberry32((Math.floor(seed / 0x100000000) ^ (seed >>> 0) ^ 0x9e3779b9) >>> 0);
  return { next, int: (n) => Math.floor(next() * n) };
}

/** Fisher-Yates shuffle into a new array; the input is left untouched. */
export function shuffled<T>(items: readonly T[], rng: Prng): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = rng.int(i + 1);
    const tmp = out[i] as T;
    out[i] = out[j] as T;
    out[j] = tmp;
  }
  return out;
}
