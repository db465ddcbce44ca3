import { seededPrng, shuffled } from './prng';

describe('seededPrng', () => {
  it.each([[0], [1], [42], [2 ** 40 + 3]])('seed %d replays the same sequence and stays in [0,1)', (seed) => {
    const a = seededPrng(seed);
    const b = seededPrng(seed);
    for (let i = 0; i < 100; i += 1) {
      const x = a.next();
      expect(x).toBe(b.next());
      expect(x >= 0 && x < 1).toBe(true);
    }
  });

  it('different seeds give different sequences', () => {
    expect(seededPrng(1).next()).not.toBe(seededPrng(2).next());
  });

  it('shuffles without losing or mutating items', () => {
    const input = [1, 2, 3, 4, 5, 6, 7, 8];
    const out = shuffled(input, seededPrng(3));
    expect([...out].sort()).toEqual(input);
    expect(input).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(shuffled(input, seededPrng(3))).toEqual(out);
  });
});
