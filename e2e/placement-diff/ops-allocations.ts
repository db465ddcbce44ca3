/**
 * Operations on allocations, usages and allocation candidates, plus malformed requests
 * (media types, Accept, unknown routes, methods).
 */
import { genRef, resourcesString, traitsString } from './ops-providers';
import type { Rng } from './rng';
import { minorOf, pickVersion, type Operation, type World } from './world';

type Make = (rng: Rng, w: World) => Operation;

function resources(rng: Rng, w: World): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const rc of rng.some(w.classes.slice(0, 5), 3))
    out[rc] = rng.weighted<number | string>([
      [90, rng.int(1, 4)],
      [4, 0],
      [3, 10000],
      [3, 'x'],
    ]);
  if (Object.keys(out).length === 0) out.VCPU = 1;
  return out;
}

/** Allocations of one consumer in the body form of `minor` (list before 1.12, dict after). */
function allocationsFor(rng: Rng, w: World, minor: number): unknown {
  const rps = rng.some(w.rps.slice(0, 8), 2);
  if (rps.length === 0) rps.push(rng.pick(w.rps));
  if (minor < 12) return rps.map((rp) => ({ resource_provider: { uuid: rp }, resources: resources(rng, w) }));
  return Object.fromEntries(rps.map((rp) => [rp, { resources: resources(rng, w) }]));
}

/** One consumer's body: the fields `minor` requires, mostly all present. */
function consumerBody(rng: Rng, w: World, consumer: string, minor: number, allowEmpty: boolean): Record<string, unknown> {
  const empty = allowEmpty && minor >= 28 && rng.chance(0.15);
  const body: Record<string, unknown> = { allocations: empty ? {} : allocationsFor(rng, w, minor) };
  const drop = (): boolean => rng.chance(0.03);
  if (minor >= 8 && !drop()) {
    body.project_id = rng.pick(w.projects);
    body.user_id = rng.pick(w.users);
  }
  if (minor >= 28 && !drop()) body.consumer_generation = genRef(rng, 'CGEN', consumer);
  if (minor >= 38 && !drop())
    body.consumer_type = rng.weighted([
      [80, 'INSTANCE'],
      [15, 'MIGRATION'],
      [5, 'bad type'],
    ]);
  return body;
}

const putAllocations: Make = (rng, w) => {
  const version = pickVersion(rng);
  const minor = Number.isNaN(minorOf(version)) ? 39 : minorOf(version);
  const consumer = rng.pick(w.consumers);
  return {
    kind: 'allocations.put',
    method: 'PUT',
    path: `/allocations/${consumer}`,
    version,
    body: consumerBody(rng, w, consumer, minor, true),
  };
};

const postAllocations: Make = (rng, w) => {
  const version = pickVersion(rng, 13);
  const minor = Number.isNaN(minorOf(version)) ? 39 : Math.max(12, minorOf(version));
  const body = Object.fromEntries(rng.some(w.consumers, 3).map((c) => [c, consumerBody(rng, w, c, minor, true)]));
  return { kind: 'allocations.post', method: 'POST', path: '/allocations', version, body };
};

const deleteAllocations: Make = (rng, w) => ({
  kind: 'allocations.delete',
  method: 'DELETE',
  path: `/allocations/${rng.pick(w.consumers)}`,
  version: pickVersion(rng),
});
const getAllocations: Make = (rng, w) =>
  rng.chance(0.5)
    ? { kind: 'allocations.get', method: 'GET', path: `/allocations/${rng.pick(w.consumers)}`, version: pickVersion(rng) }
    : { kind: 'rp_allocations.get', method: 'GET', path: `/resource_providers/${rng.pick(w.rps)}/allocations`, version: pickVersion(rng) };

const usages: Make = (rng, w) => {
  if (rng.chance(0.5))
    return { kind: 'rp_usages.get', method: 'GET', path: `/resource_providers/${rng.pick(w.rps)}/usages`, version: pickVersion(rng) };
  const q = new URLSearchParams();
  if (rng.chance(0.95)) q.append('project_id', rng.pick(w.projects));
  if (rng.chance(0.4)) q.append('user_id', rng.pick(w.users));
  if (rng.chance(0.3)) q.append('consumer_type', rng.pick(['INSTANCE', 'MIGRATION', 'all', 'unknown', 'bad type']));
  if (rng.chance(0.05)) q.append('bogus', '1');
  return { kind: 'usages.get', method: 'GET', path: `/usages?${q.toString()}`, version: pickVersion(rng, 9) };
};

/** One granular group's parameters (suffix '' is the unnumbered group). */
function addGroup(rng: Rng, w: World, q: URLSearchParams, suffix: string, minor: number): void {
  if (rng.chance(0.92)) q.append(`resources${suffix}`, resourcesString(rng, w));
  if (rng.chance(0.3)) q.append(`required${suffix}`, traitsString(rng, w));
  if (rng.chance(0.15)) q.append(`required${suffix}`, traitsString(rng, w));
  if (rng.chance(0.2))
    q.append(
      `member_of${suffix}`,
      rng.chance(0.6) ? rng.pick(w.aggs) : `${rng.pick(['in:', '!', '!in:'])}${rng.some(w.aggs, 2).join(',') || rng.pick(w.aggs)}`,
    );
  if (minor >= 31 && rng.chance(0.1)) q.append(`in_tree${suffix}`, rng.pick(w.rps));
}

const candidates: Make = (rng, w) => {
  const version = pickVersion(rng, 10);
  const minor = Number.isNaN(minorOf(version)) ? 39 : minorOf(version);
  const q = new URLSearchParams();
  addGroup(rng, w, q, '', minor);
  const suffixes = rng.some(minor >= 33 ? ['1', '2', '_NET', '_DISK'] : ['1', '2', '3'], minor >= 25 ? 2 : 0);
  for (const s of suffixes) addGroup(rng, w, q, s, minor);
  if (rng.chance(suffixes.length > 1 ? 0.8 : 0.2)) q.append('group_policy', rng.pick(['none', 'isolate', 'mixed']));
  if (rng.chance(0.1)) q.append('group_policy', rng.pick(['none', 'isolate']));
  if (rng.chance(0.2)) q.append('limit', String(rng.pick([1, 2, 5, 0])));
  if (rng.chance(0.05)) q.append('limit', '3');
  if (minor >= 35 && rng.chance(0.1)) q.append('root_required', traitsString(rng, w));
  if (minor >= 36 && suffixes.length > 1 && rng.chance(0.1)) q.append('same_subtree', suffixes.join(','));
  if (rng.chance(0.03)) q.append('bogus', '1');
  return { kind: 'candidates.get', method: 'GET', path: `/allocation_candidates?${q.toString()}`, version };
};

const malformed: Make = (rng, w) => {
  const rp = rng.pick(w.rps);
  return rng.weighted<() => Operation>([
    [
      3,
      () => ({
        kind: 'bad.content_type',
        method: 'POST',
        path: '/resource_providers',
        version: pickVersion(rng),
        raw: JSON.stringify({ name: 'ct' }),
        headers: { 'content-type': rng.pick(['text/plain', 'application/xml']) },
      }),
    ],
    [
      3,
      () => ({
        kind: 'bad.json',
        method: 'PUT',
        path: `/resource_providers/${rp}/inventories`,
        version: pickVersion(rng),
        raw: rng.pick(['{', '[]', 'null', '{"inventories": 1}']),
      }),
    ],
    [
      2,
      () => ({
        kind: 'bad.accept',
        method: 'GET',
        path: '/resource_providers',
        version: pickVersion(rng),
        headers: { accept: rng.pick(['text/plain', 'text/html', 'application/xml']) },
      }),
    ],
    [
      2,
      () => ({
        kind: 'bad.route',
        method: 'GET',
        path: rng.pick(['/nope', `/resource_providers/${rp}/nope`, '/allocations']),
        version: pickVersion(rng),
      }),
    ],
    [
      2,
      () => ({
        kind: 'bad.method',
        method: rng.pick(['PATCH', 'POST', 'DELETE']),
        path: rng.pick(['/traits', `/resource_providers/${rp}/usages`, '/usages']),
        version: pickVersion(rng, 9),
      }),
    ],
    [1, () => ({ kind: 'root', method: 'GET', path: '/', version: pickVersion(rng) })],
  ])();
};

/** Allocation-side operations with their weights. */
export const ALLOCATION_OPS: ReadonlyArray<readonly [number, Make]> = [
  [12, putAllocations],
  [4, postAllocations],
  [3, deleteAllocations],
  [4, getAllocations],
  [4, usages],
  [10, candidates],
  [4, malformed],
];
