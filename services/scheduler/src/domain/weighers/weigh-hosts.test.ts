import { ctx, group, hostState } from '../../../test/support/fixtures';
import { weightMultiplier } from './multiplier';
import { resolveWeighers, weigherProblems } from './registry';
import { normalize, weighHosts } from './weigh-hosts';

const ids = (ws: { host: { record: { uuid: string } } }[]): string[] => ws.map((w) => w.host.record.uuid);

describe('normalize (Nova min-max)', () => {
  it.each<[number[], number[]]>([
    [[], []],
    [[5], [0]],
    [
      [3, 3, 3],
      [0, 0, 0],
    ],
    [
      [0, 5, 10],
      [0, 0.5, 1],
    ],
    [
      [-4, 0],
      [0, 1],
    ],
  ])('%j -> %j', (input, output) => {
    expect(normalize(input)).toEqual(output);
  });
});

describe('weighHosts', () => {
  const a = hostState({ uuid: 'a' }, { MEMORY_MB: [8192, 8000], VCPU: [8, 0] });
  const b = hostState({ uuid: 'b' }, { MEMORY_MB: [8192, 0], VCPU: [8, 8] });
  const c = hostState({ uuid: 'c', failedBuilds: 2 }, { MEMORY_MB: [8192, 0], VCPU: [8, 0] });

  it('spreads on free RAM with the default multiplier', () => {
    expect(ids(weighHosts([a, b], resolveWeighers(['RAMWeigher'], {}), {}, ctx()))).toEqual(['b', 'a']);
  });

  it('stacks with a negative RAM multiplier', () => {
    expect(ids(weighHosts([a, b], resolveWeighers(['RAMWeigher'], {}), { ram_weight_multiplier: -1 }, ctx()))).toEqual(['a', 'b']);
  });

  it('sums multiplier x normalized score over weighers', () => {
    const ws = weighHosts([a, b], resolveWeighers(['RAMWeigher', 'CPUWeigher'], {}), { cpu_weight_multiplier: 2 }, ctx());
    expect(ws.map((w) => [w.host.record.uuid, w.weight])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });

  it('sinks a host with recent build failures below every healthy one', () => {
    const weighers = resolveWeighers(['RAMWeigher', 'CPUWeigher', 'BuildFailureWeigher'], {});
    expect(ids(weighHosts([c, a, b], weighers, {}, ctx()))).toEqual(['a', 'b', 'c']);
  });

  it('pulls soft-affinity members together and pushes soft-anti-affinity apart', () => {
    const h1 = hostState({ uuid: 'x', host: 'h1' });
    const h2 = hostState({ uuid: 'y', host: 'h2' });
    const weighers = resolveWeighers(['ServerGroupSoftAffinityWeigher', 'ServerGroupSoftAntiAffinityWeigher'], {});
    expect(ids(weighHosts([h2, h1], weighers, {}, ctx({ group: group('soft-affinity', { h1: 1 }) })))).toEqual(['x', 'y']);
    expect(ids(weighHosts([h1, h2], weighers, {}, ctx({ group: group('soft-anti-affinity', { h1: 1 }) })))).toEqual(['y', 'x']);
  });

  it('keeps the input order on ties (the caller shuffles it with the seed)', () => {
    const same = ['p', 'q', 'r'].map((u) => hostState({ uuid: u }));
    expect(ids(weighHosts(same, resolveWeighers(['RAMWeigher'], {}), {}, ctx()))).toEqual(['p', 'q', 'r']);
  });
});

describe('weightMultiplier (aggregate override)', () => {
  const agg = (v: string) => ({ uuid: v, name: v, metadata: { ram_weight_multiplier: v } });
  it.each<[string, string[], number]>([
    ['no aggregate: configured', [], 1.5],
    ['one aggregate overrides', ['-2'], -2],
    ['several: the smallest wins', ['3', '0.5'], 0.5],
    ['unparsable ignored', ['lots'], 1.5],
  ])('%s', (_n, values, expected) => {
    expect(weightMultiplier(hostState({ aggregates: values.map(agg) }), 'ram_weight_multiplier', 1.5)).toBe(expected);
  });
});

describe('weigher registry', () => {
  it('lists unknown weighers and multiplier options', () => {
    expect(weigherProblems(['RAMWeigher', 'MetricsWeigher'], { ram_weight_multiplier: 1, ram_weight: 2 })).toEqual([
      'weight_classes: unknown weigher MetricsWeigher',
      'unknown weight multiplier option ram_weight',
    ]);
  });
});
