import { hostState } from '../../../test/support/fixtures';
import { seededPrng } from '../prng';
import { orderForClaim } from './host-order';
import type { WeighedHost } from './weigh-hosts';

const weighed = (...weights: number[]): WeighedHost[] => weights.map((weight, i) => ({ host: hostState({ uuid: `h${i}` }), weight }));
const ids = (ws: WeighedHost[]): string[] => ws.map((w) => w.host.record.uuid);

describe('orderForClaim (host_subset_size)', () => {
  it.each([[1], [0]])('subset %i keeps the weighed order', (size) => {
    expect(ids(orderForClaim(weighed(3, 2, 1), size, false, seededPrng(1)))).toEqual(['h0', 'h1', 'h2']);
  });

  it('picks the first host among the best N only, the rest keep their order', () => {
    const firsts = new Set<string>();
    for (let seed = 0; seed < 200; seed += 1) {
      const order = ids(orderForClaim(weighed(5, 4, 3, 2, 1), 3, false, seededPrng(seed)));
      firsts.add(order[0] as string);
      expect([...order].sort()).toEqual(['h0', 'h1', 'h2', 'h3', 'h4']);
      expect(order.slice(1).filter((h) => h === 'h3' || h === 'h4')).toEqual(['h3', 'h4']);
    }
    expect([...firsts].sort()).toEqual(['h0', 'h1', 'h2']);
  });

  it('is reproducible for a seed', () => {
    const a = ids(orderForClaim(weighed(1, 1, 1, 1, 1, 1), 4, true, seededPrng(99)));
    const b = ids(orderForClaim(weighed(1, 1, 1, 1, 1, 1), 4, true, seededPrng(99)));
    expect(a).toEqual(b);
  });

  it('shuffles only the hosts tied for the best weight', () => {
    for (let seed = 0; seed < 50; seed += 1) {
      const order = ids(orderForClaim(weighed(9, 9, 9, 1, 0), 1, true, seededPrng(seed)));
      expect(order.slice(3)).toEqual(['h3', 'h4']);
    }
  });
});
