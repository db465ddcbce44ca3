/**
 * mulberry32: the one seeded pseudo-random stream of cellsched (scheduler tie-breaks and host
 * samples, simulated-compute fault plans, the chaos and placement-diff runs). Small, fast, and
 * the same floats for the same seed on every machine, so a printed seed replays a run.
 *
 * `seed` is taken as a 32-bit unsigned state (`seed >>> 0`); callers that start from a wider
 * seed fold it themselves. **Never change the arithmetic**: seeded tests and recorded chaos
 * reproductions depend on these exact streams (`mulberry32.test.ts` pins them). Pure given the seed.
 *
 * @returns a function giving the next float in [0, 1) on each call.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x100000000;
  };
}
