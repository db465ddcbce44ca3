/**
 * The search's shortcut for one single-provider group must answer exactly what the general
 * path answers: random snapshots (flat, trees, sharing providers, usage, unit limits) and
 * random queries (traits, forbidden traits, member_of, in_tree, suffixed groups, limit,
 * seed, microversions before and after 1.29), compared field for field.
 */
import { ProviderMap } from './provider-map';
import { parseCandidateQuery } from './query-parser';
import { findAllocationCandidates } from './search';
import type { CandidateSnapshot, InventoryUsage, ProviderNode } from './types';

/** xorshift32: reproducible randomness. */
function prng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

const RCS = ['VCPU', 'MEMORY_MB', 'DISK_GB'];
const TRAITS = ['HW_CPU_X86_AVX2', 'CUSTOM_FAST', 'MISC_SHARES_VIA_AGGREGATE'];
const AGGS = ['6a1b5c44-0d5f-4b0e-9a5e-2f0c0b1b6a01', '6a1b5c44-0d5f-4b0e-9a5e-2f0c0b1b6a02'];

function uuid(i: number): string {
  return `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
}

function inventory(r: (n: number) => number): InventoryUsage {
  const total = 1 + r(16);
  return {
    total,
    reserved: r(3) === 0 ? 1 : 0,
    minUnit: 1 + r(2),
    maxUnit: 1 + r(total),
    stepSize: r(4) === 0 ? 2 : 1,
    allocationRatio: r(3) === 0 ? 2 : 1,
    used: r(total + 1),
  };
}

function snapshot(r: (n: number) => number, trees: boolean, sharing: boolean): CandidateSnapshot {
  const nodes: ProviderNode[] = [];
  const n = 3 + r(30);
  for (let i = 1; i <= n; i++) {
    const parent = trees && i > 1 && r(2) === 0 ? (nodes[r(nodes.length)] as ProviderNode) : null;
    const inventories = new Map<number, InventoryUsage>();
    RCS.forEach((_, rc) => {
      if (r(3) > 0) inventories.set(rc, inventory(r));
    });
    const traits = new Set<number>();
    TRAITS.forEach((_, t) => {
      if (r(3) === 0 && (t !== 2 || sharing)) traits.add(t);
    });
    const aggregates = new Set<number>();
    AGGS.forEach((_, a) => {
      if (r(2) === 0) aggregates.add(a);
    });
    nodes.push({
      id: i * 2,
      uuid: uuid(i),
      name: `rp${i}`,
      generation: r(5),
      parentId: parent?.id ?? null,
      rootId: parent?.rootId ?? i * 2,
      traits,
      aggregates,
      inventories,
    });
  }
  const treeNodes = nodes.filter((p) => p.parentId !== null).length;
  return {
    providers: ProviderMap.of(nodes),
    providerIdByUuid: new Map(nodes.map((p) => [p.uuid, p.id])),
    resourceClassIdByName: new Map(RCS.map((name, id) => [name, id])),
    resourceClassNameById: new Map(RCS.map((name, id) => [id, name])),
    traitIdByName: new Map(TRAITS.map((name, id) => [name, id])),
    traitNameById: new Map(TRAITS.map((name, id) => [id, name])),
    aggregateIdByUuid: new Map(AGGS.map((u, id) => [u, id])),
    aggregateUuidById: new Map(AGGS.map((u, id) => [id, u])),
    hasTrees: treeNodes > 0,
    treeNodes,
    memo: {},
  };
}

function query(r: (n: number) => number, snap: CandidateSnapshot, minor: number): string {
  const suffix = r(4) === 0 ? '1' : '';
  const res = RCS.filter(() => r(2) === 0).map((rc) => `${rc}:${1 + r(3)}`);
  const parts = [`resources${suffix}=${(res.length > 0 ? res : ['VCPU:1']).join(',')}`];
  if (r(3) === 0) parts.push(`required${suffix}=${r(2) === 0 ? '' : '!'}${TRAITS[r(2)]}`);
  if (r(4) === 0) parts.push(`member_of${suffix}=${AGGS[r(2)]}`);
  if (minor >= 35 && r(6) === 0) parts.push(`in_tree${suffix}=${[...snap.providers.values()][r(snap.providers.size)]?.uuid}`);
  if (minor >= 35 && r(4) === 0) parts.push(`root_required=${r(2) === 0 ? '' : '!'}${TRAITS[r(2)]}`);
  if (r(2) === 0) parts.push(`limit=${1 + r(6)}`);
  return parts.join('&');
}

test('the single-group shortcut answers exactly what the general path answers', () => {
  const r = prng(20261122);
  let shortcutCases = 0;
  for (let i = 0; i < 3000; i++) {
    const trees = r(2) === 0;
    const sharing = r(5) === 0;
    const snap = snapshot(r, trees, sharing);
    const minor = r(3) === 0 ? 28 : 39;
    const q = query(r, snap, minor);
    const { groups, params } = parseCandidateQuery([...new URLSearchParams(q)], minor);
    const seed = r(3) === 0 ? 0 : 1 + r(1000);
    const fast = findAllocationCandidates(snap, groups, params, { seed });
    const general = findAllocationCandidates(snap, groups, params, { seed, general: true });
    expect({ q, minor, seed, result: fast }).toEqual({ q, minor, seed, result: general });
    if (fast.allocationRequests.length > 0 && !sharing && (!trees || q.startsWith('resources1'))) shortcutCases++;
  }
  // NOTE: the comparison must cover the shortcut with non-empty answers, many times.
  expect(shortcutCases).toBeGreaterThan(300);
});
