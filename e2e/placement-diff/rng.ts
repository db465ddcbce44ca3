import { mulberry32 } from '@cellsched/prng';

/**
 * The seeded pseudo-random source of the differential run: every choice of the operation
 * sequence comes from here, so one seed is one exact sequence on every machine.
 */
export class Rng {
  private readonly stream: () => number;

  constructor(seed: number) {
    this.stream = mulberry32(seed >>> 0 || 0x9e3779b9);
  }

  /** A float in [0, 1) (the shared mulberry32). */
  next(): number {
    return this.stream();
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** A few distinct items (0..max) of `items`, in a random order. */
  some<T>(items: readonly T[], max: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    const n = this.int(0, Math.min(max, pool.length));
    while (out.length < n) out.push(...pool.splice(this.int(0, pool.length - 1), 1));
    return out;
  }

  /** Picks by weight: `[[weight, value], ...]`. */
  weighted<T>(table: ReadonlyArray<readonly [number, T]>): T {
    const total = table.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of table) {
      r -= w;
      if (r < 0) return v;
    }
    const last = table[table.length - 1];
    if (last === undefined) throw new Error('weighted pick from an empty table');
    return last[1];
  }

  /** A version 4 uuid made of this source's bits. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16));
    hex[12] = '4';
    hex[16] = (8 + this.int(0, 3)).toString(16);
    const h = hex.join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
}
