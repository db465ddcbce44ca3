/**
 * Operations on providers, inventories, traits, aggregates and resource classes: valid and
 * invalid bodies, random microversions, references drawn from the world's pools (which
 * may or may not exist on the targets at that point of the sequence).
 */
import type { Rng } from './rng';
import { minorOf, pickName, pickVersion, type Operation, type World } from './world';

type Make = (rng: Rng, w: World) => Operation;

const rpPath = (rp: string) => `/resource_providers/${rp}`;

function uuidVariant(rng: Rng, u: string): unknown {
  return rng.weighted<() => unknown>([
    [88, () => u],
    [3, () => u.toUpperCase()],
    [3, () => u.replace(/-/g, '')],
    [2, () => `{${u}}`],
    [2, () => 'not-a-uuid'],
    [2, () => 42],
  ])();
}

const createProvider: Make = (rng, w) => {
  const version = pickVersion(rng);
  const body: Record<string, unknown> = { name: pickName(rng) };
  if (rng.chance(0.9)) body.uuid = uuidVariant(rng, rng.pick(w.rps));
  if (rng.chance(0.3)) body.parent_provider_uuid = rng.chance(0.85) ? rng.pick(w.rps) : null;
  if (rng.chance(0.03)) body.extra = 1;
  if (rng.chance(0.03)) delete body.name;
  return { kind: 'rp.create', method: 'POST', path: '/resource_providers', version, body };
};

const updateProvider: Make = (rng, w) => {
  const body: Record<string, unknown> = { name: pickName(rng) };
  if (rng.chance(0.4)) body.parent_provider_uuid = rng.chance(0.8) ? rng.pick(w.rps) : null;
  return { kind: 'rp.update', method: 'PUT', path: rpPath(rng.pick(w.rps)), version: pickVersion(rng), body };
};

const deleteProvider: Make = (rng, w) => ({
  kind: 'rp.delete',
  method: 'DELETE',
  path: rpPath(rng.pick(w.rps)),
  version: pickVersion(rng),
});
const showProvider: Make = (rng, w) => ({ kind: 'rp.show', method: 'GET', path: rpPath(rng.pick(w.rps)), version: pickVersion(rng) });

const listProviders: Make = (rng, w) => {
  const q = new URLSearchParams();
  const filters: Array<() => void> = [
    () => q.append('name', `rp-${rng.int(0, 15)}`),
    () => q.append('uuid', String(uuidVariant(rng, rng.pick(w.rps)))),
    () =>
      q.append(
        'member_of',
        rng.chance(0.5) ? rng.pick(w.aggs) : `${rng.pick(['in:', '!', '!in:'])}${rng.some(w.aggs, 3).join(',') || rng.pick(w.aggs)}`,
      ),
    () => q.append('resources', resourcesString(rng, w)),
    () => q.append('in_tree', String(uuidVariant(rng, rng.pick(w.rps)))),
    () => q.append('required', traitsString(rng, w)),
    () => q.append('bogus', 'x'),
  ];
  for (const f of rng.some(filters, 3)) {
    f();
    if (rng.chance(0.15)) f();
  }
  const qs = q.toString();
  return { kind: 'rp.list', method: 'GET', path: `/resource_providers${qs ? `?${qs}` : ''}`, version: pickVersion(rng) };
};

/** `VCPU:1,MEMORY_MB:512`-like, sometimes malformed. */
export function resourcesString(rng: Rng, w: World): string {
  const parts = rng.some(w.classes, 3).map(
    (rc) =>
      `${rc}:${rng.weighted<number | string>([
        [90, rng.int(1, 4)],
        [4, 0],
        [3, -1],
        [3, 'x'],
      ])}`,
  );
  if (parts.length === 0 || rng.chance(0.03)) return rng.pick(['', 'VCPU', 'VCPU:1:2', 'NOPE_CLASS:1']);
  return parts.join(',');
}

/** `A,!B` or `in:A,B`, sometimes malformed. */
export function traitsString(rng: Rng, w: World): string {
  const picked = rng.some(w.traits, 3);
  if (picked.length === 0) return rng.pick(['', ',', '!', 'in:']);
  if (rng.chance(0.2)) return `in:${picked.join(',')}`;
  return picked.map((t) => (rng.chance(0.25) ? `!${t}` : t)).join(',');
}

function inventoryRecord(rng: Rng): Record<string, unknown> {
  const total = rng.pick([1, 4, 8, 16, 64, 2048]);
  const inv: Record<string, unknown> = { total };
  if (rng.chance(0.3)) inv.reserved = rng.pick([0, 1, total, total + 1]);
  if (rng.chance(0.2)) inv.min_unit = rng.pick([1, 2]);
  if (rng.chance(0.2)) inv.max_unit = rng.pick([1, 4, total]);
  if (rng.chance(0.2)) inv.step_size = rng.pick([1, 2]);
  if (rng.chance(0.2)) inv.allocation_ratio = rng.pick([1.0, 1.5, 16.0, 0]);
  if (rng.chance(0.03)) inv.total = rng.pick([0, -1, 'x']);
  return inv;
}

/** A generation placeholder: the target's current one, or a stale or absent one. */
export function genRef(rng: Rng, kind: 'GEN' | 'CGEN', uuid: string): unknown {
  return rng.weighted<unknown>([
    [85, `$${kind}:${uuid}`],
    [8, `$${kind}-1:${uuid}`],
    [4, 99],
    [3, null],
  ]);
}

const putInventories: Make = (rng, w) => {
  const rp = rng.pick(w.rps);
  const inventories: Record<string, unknown> = {};
  for (const rc of rng.some(w.classes, 3)) inventories[rc] = inventoryRecord(rng);
  if (rng.chance(0.03)) inventories.NOPE_CLASS = { total: 1 };
  return {
    kind: 'inventory.put_all',
    method: 'PUT',
    path: `${rpPath(rp)}/inventories`,
    version: pickVersion(rng),
    body: { resource_provider_generation: genRef(rng, 'GEN', rp), inventories },
  };
};

const postInventory: Make = (rng, w) => {
  const rp = rng.pick(w.rps);
  return {
    kind: 'inventory.post',
    method: 'POST',
    path: `${rpPath(rp)}/inventories`,
    version: pickVersion(rng),
    body: { resource_class: rng.pick(w.classes), ...inventoryRecord(rng) },
  };
};

const putInventory: Make = (rng, w) => {
  const rp = rng.pick(w.rps);
  return {
    kind: 'inventory.put_one',
    method: 'PUT',
    path: `${rpPath(rp)}/inventories/${rng.pick(w.classes)}`,
    version: pickVersion(rng),
    body: { resource_provider_generation: genRef(rng, 'GEN', rp), ...inventoryRecord(rng) },
  };
};

const deleteInventory: Make = (rng, w) => {
  const all = rng.chance(0.3);
  const path = `${rpPath(rng.pick(w.rps))}/inventories${all ? '' : `/${rng.pick(w.classes)}`}`;
  return { kind: all ? 'inventory.delete_all' : 'inventory.delete_one', method: 'DELETE', path, version: pickVersion(rng) };
};

const getInventory: Make = (rng, w) => {
  const one = rng.chance(0.5);
  return {
    kind: one ? 'inventory.show' : 'inventory.list',
    method: 'GET',
    path: `${rpPath(rng.pick(w.rps))}/inventories${one ? `/${rng.pick(w.classes)}` : ''}`,
    version: pickVersion(rng),
  };
};

const putTrait: Make = (rng, w) => ({
  kind: 'trait.put',
  method: 'PUT',
  path: `/traits/${rng.weighted([
    [85, rng.pick(w.customTraits)],
    [10, rng.pick(w.traits)],
    [5, 'NOT_CUSTOM'],
  ])}`,
  version: pickVersion(rng, 6),
});
const deleteTrait: Make = (rng, w) => ({
  kind: 'trait.delete',
  method: 'DELETE',
  path: `/traits/${rng.pick(w.traits)}`,
  version: pickVersion(rng, 6),
});
const listTraits: Make = (rng, w) => {
  const q = new URLSearchParams();
  if (rng.chance(0.4)) q.append('name', rng.pick([`in:${rng.some(w.traits, 3).join(',')}`, 'startswith:CUSTOM_', 'startswith:HW_', 'bad']));
  if (rng.chance(0.3)) q.append('associated', rng.pick(['true', 'false', 'TRUE', 'maybe']));
  if (rng.chance(0.05)) q.append('bogus', '1');
  return { kind: 'trait.list', method: 'GET', path: `/traits${q.size ? `?${q.toString()}` : ''}`, version: pickVersion(rng, 6) };
};

const setProviderTraits: Make = (rng, w) => {
  const rp = rng.pick(w.rps);
  const traits = rng.chance(0.05) ? ['CUSTOM_NOT_THERE'] : rng.some(w.traits, 3);
  return {
    kind: 'rp_traits.put',
    method: 'PUT',
    path: `${rpPath(rp)}/traits`,
    version: pickVersion(rng, 6),
    body: { resource_provider_generation: genRef(rng, 'GEN', rp), traits },
  };
};
const providerTraits: Make = (rng, w) => {
  const del = rng.chance(0.3);
  return {
    kind: del ? 'rp_traits.delete' : 'rp_traits.get',
    method: del ? 'DELETE' : 'GET',
    path: `${rpPath(rng.pick(w.rps))}/traits`,
    version: pickVersion(rng, 6),
  };
};

const setAggregates: Make = (rng, w) => {
  const rp = rng.pick(w.rps);
  const version = pickVersion(rng, 1);
  const aggs = rng.chance(0.04) ? ['nope'] : rng.some(w.aggs, 3);
  const body =
    minorOf(version) >= 19 === rng.chance(0.92) ? { aggregates: aggs, resource_provider_generation: genRef(rng, 'GEN', rp) } : aggs;
  return { kind: 'rp_aggregates.put', method: 'PUT', path: `${rpPath(rp)}/aggregates`, version, body };
};
const getAggregates: Make = (rng, w) => ({
  kind: 'rp_aggregates.get',
  method: 'GET',
  path: `${rpPath(rng.pick(w.rps))}/aggregates`,
  version: pickVersion(rng, 1),
});

const resourceClasses: Make = (rng, w) => {
  const version = pickVersion(rng, 2);
  const name = rng.weighted([
    [80, rng.pick(w.customClasses)],
    [10, rng.pick(w.classes)],
    [5, 'CUSTOM_lower'],
    [5, 'NOT_CUSTOM'],
  ]);
  return rng.weighted<() => Operation>([
    [3, () => ({ kind: 'rc.create', method: 'POST', path: '/resource_classes', version, body: { name } })],
    [
      3,
      () => ({
        kind: 'rc.put',
        method: 'PUT',
        path: `/resource_classes/${name}`,
        version,
        ...(minorOf(version) < 7 ? { body: { name: rng.pick(w.customClasses) } } : {}),
      }),
    ],
    [2, () => ({ kind: 'rc.show', method: 'GET', path: `/resource_classes/${name}`, version })],
    [2, () => ({ kind: 'rc.delete', method: 'DELETE', path: `/resource_classes/${name}`, version })],
    [1, () => ({ kind: 'rc.list', method: 'GET', path: '/resource_classes', version })],
  ])();
};

/** Provider-side operations with their weights. */
export const PROVIDER_OPS: ReadonlyArray<readonly [number, Make]> = [
  [10, createProvider],
  [3, updateProvider],
  [2, deleteProvider],
  [3, showProvider],
  [5, listProviders],
  [8, putInventories],
  [3, postInventory],
  [3, putInventory],
  [3, deleteInventory],
  [2, getInventory],
  [2, putTrait],
  [1, deleteTrait],
  [2, listTraits],
  [4, setProviderTraits],
  [2, providerTraits],
  [3, setAggregates],
  [1, getAggregates],
  [4, resourceClasses],
];
