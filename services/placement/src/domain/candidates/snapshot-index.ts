/**
 * Search indexes of a snapshot, built lazily and derived from the previous snapshot's
 * when the new one differs by a few providers (the snapshot cache says which), so a
 * stream of claims does not rebuild them O(providers) per snapshot:
 *
 * - per resource class: the providers having an inventory of it, in id order, with
 *   capacity, usage and unit limits in typed arrays (a tight loop answers "who fits N");
 * - per trait and per aggregate: the member provider ids, in id order.
 *
 * Pure caches: the answers are what a scan of `snap.providers` gives.
 */
import { capacityOf } from '../capacity';
import type { CandidateSnapshot, ClassIndex, InventoryUsage, ProviderNode, SnapshotIndexes } from './types';

export type { ClassIndex } from './types';

type Column = Exclude<keyof ClassIndex, 'ids'>;
const COLUMNS: readonly Column[] = ['rootIds', 'used', 'capacity', 'minUnit', 'maxUnit', 'stepSize'];

function rowOf(p: ProviderNode, inv: InventoryUsage): Record<Column, number> {
  return {
    rootIds: p.rootId,
    used: inv.used,
    capacity: capacityOf(inv),
    minUnit: inv.minUnit,
    maxUnit: inv.maxUnit,
    stepSize: inv.stepSize,
  };
}

function indexesOf(snap: CandidateSnapshot): SnapshotIndexes {
  return (snap.memo.indexes ??= { classes: new Map(), traits: new Map(), aggregates: new Map(), rooted: new Map() });
}

/**
 * Records that `next` is `prev` with the providers `changed` reloaded (added, changed or
 * removed). Only one generation is kept: `prev` forgets its own predecessor.
 */
export function noteDerivedSnapshot(next: CandidateSnapshot, prev: CandidateSnapshot, changed: readonly number[]): void {
  prev.memo.derivedFrom = undefined;
  next.memo.derivedFrom = { prev, changed };
}

function buildClass(snap: CandidateSnapshot, rcId: number): ClassIndex {
  const rows: [number, Record<Column, number>][] = [];
  for (const p of snap.providers.values()) {
    const inv = p.inventories.get(rcId);
    if (inv) rows.push([p.id, rowOf(p, inv)]);
  }
  const n = rows.length;
  const ix: ClassIndex = {
    ids: new Int32Array(n),
    rootIds: new Int32Array(n),
    used: new Float64Array(n),
    capacity: new Float64Array(n),
    minUnit: new Float64Array(n),
    maxUnit: new Float64Array(n),
    stepSize: new Float64Array(n),
  };
  rows.forEach(([id, row], i) => {
    ix.ids[i] = id;
    for (const c of COLUMNS) ix[c][i] = row[c];
  });
  return ix;
}

function position(ids: Int32Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = ids[mid] as number;
    if (v === id) return mid;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** prev's index with the changed providers' rows patched (columns copied on write); null when membership changed. */
function patchClass(prev: ClassIndex, snap: CandidateSnapshot, rcId: number, changed: readonly number[]): ClassIndex | null {
  const next: { -readonly [K in keyof ClassIndex]: ClassIndex[K] } = { ...prev };
  const copied = new Set<Column>();
  for (const id of changed) {
    const i = position(prev.ids, id);
    const p = snap.providers.get(id);
    const inv = p?.inventories.get(rcId);
    if (i >= 0 !== (inv !== undefined)) return null;
    if (i < 0 || !p || !inv) continue;
    const row = rowOf(p, inv);
    for (const c of COLUMNS) {
      if (Object.is(next[c][i], row[c])) continue;
      if (!copied.has(c)) {
        copied.add(c);
        (next as Record<Column, Int32Array | Float64Array>)[c] = prev[c].slice();
      }
      next[c][i] = row[c];
    }
  }
  return next;
}

/** The index of resource class `rcId` in `snap`. */
export function classIndex(snap: CandidateSnapshot, rcId: number): ClassIndex {
  const own = indexesOf(snap).classes;
  let ix = own.get(rcId);
  if (ix) return ix;
  const link = snap.memo.derivedFrom;
  const prev = link ? link.prev.memo.indexes?.classes.get(rcId) : undefined;
  ix = (prev && link && patchClass(prev, snap, rcId, link.changed)) || buildClass(snap, rcId);
  own.set(rcId, ix);
  return ix;
}

type MemberKind = 'traits' | 'aggregates' | 'rooted';

function memberIds(snap: CandidateSnapshot, kind: MemberKind, id: number): readonly number[] {
  const own = indexesOf(snap)[kind];
  let ids = own.get(id);
  if (ids) return ids;
  const has = (p: ProviderNode | undefined): boolean => p !== undefined && (kind === 'rooted' ? p.rootId !== p.id : p[kind].has(id));
  const link = snap.memo.derivedFrom;
  const prev = link ? link.prev.memo.indexes?.[kind].get(id) : undefined;
  if (prev && link) {
    const changed = new Set(link.changed);
    const added = link.changed.filter((x) => has(snap.providers.get(x))).sort((a, b) => a - b);
    const out: number[] = [];
    let j = 0;
    for (const x of prev) {
      if (changed.has(x)) continue;
      while (j < added.length && (added[j] as number) < x) out.push(added[j++] as number);
      out.push(x);
    }
    while (j < added.length) out.push(added[j++] as number);
    ids = out;
  } else {
    const out: number[] = [];
    for (const p of snap.providers.values()) if (has(p)) out.push(p.id);
    ids = out;
  }
  own.set(id, ids);
  return ids;
}

/** Ids of the providers having trait `traitId`, in id order. */
export function traitMembers(snap: CandidateSnapshot, traitId: number): readonly number[] {
  return memberIds(snap, 'traits', traitId);
}

/** Ids of the providers in aggregate `aggregateId`, in id order. */
export function aggregateMembers(snap: CandidateSnapshot, aggregateId: number): readonly number[] {
  return memberIds(snap, 'aggregates', aggregateId);
}

/** Ids of the providers whose root is another provider (tree members), in id order. */
export function nonRootProviders(snap: CandidateSnapshot): readonly number[] {
  return memberIds(snap, 'rooted', 0);
}
