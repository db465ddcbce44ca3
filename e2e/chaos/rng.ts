import { mulberry32 } from '@cellsched/prng';
import type { Rng } from './scenario';

/** The shared mulberry32 stream (@cellsched/prng): the same stream for the same seed on every machine. */
export function seededRng(seed: number): Rng {
  const next = mulberry32(seed);
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    shuffle: (items) => {
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
      }
      return items;
    },
    fork: () => seededRng(Math.floor(next() * 4294967296)),
  };
  return rng;
}

/** A fresh seed (when --seed is not given). */
export const randomSeed = (): number => Math.floor(Math.random() * 4294967296) >>> 0;
