import type { Rng } from './rng';

/**
 * One request of the sequence, identical for both targets. A body string `$GEN:<rp>` /
 * `$CGEN:<consumer>` (optionally `$GEN+1:` …) is replaced, per target, by that target's own
 * current provider / consumer generation (read just before sending), so that one
 * divergence does not cascade into every later generation check.
 */
export interface Operation {
  /** Stable label of what the operation exercises, e.g. `inventory.put_all`. */
  readonly kind: string;
  readonly method: string;
  /** Path and query string. */
  readonly path: string;
  /** The OpenStack-API-Version value (`placement X`); undefined: no header. */
  readonly version: string | undefined;
  /** JSON body (serialized), or a raw string body. */
  readonly body?: unknown;
  readonly raw?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The fixed pools every operation draws its references from (uuids from the seed). */
export interface World {
  readonly rps: readonly string[];
  readonly aggs: readonly string[];
  readonly consumers: readonly string[];
  readonly projects: readonly string[];
  readonly users: readonly string[];
  readonly classes: readonly string[];
  readonly customClasses: readonly string[];
  readonly traits: readonly string[];
  readonly customTraits: readonly string[];
}

export function makeWorld(rng: Rng): World {
  const n = (k: number) => Array.from({ length: k }, () => rng.uuid());
  const customClasses = ['CUSTOM_DIFF_A', 'CUSTOM_DIFF_B', 'CUSTOM_DIFF_C'];
  const customTraits = ['CUSTOM_DIFF_T1', 'CUSTOM_DIFF_T2', 'CUSTOM_DIFF_T3'];
  return {
    rps: n(12),
    aggs: n(4),
    consumers: n(10),
    projects: n(2),
    users: n(2),
    classes: ['VCPU', 'MEMORY_MB', 'DISK_GB', 'SRIOV_NET_VF', ...customClasses],
    customClasses,
    traits: ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE42', 'STORAGE_DISK_SSD', ...customTraits],
    customTraits,
  };
}

const INVALID_VERSIONS = ['1.-1', 'abc', '2.0', '1.40', '1', '1.5.3', ' 1. 5', 'LATEST', '0.9', '1.01', '1.5, placement 1.30'];

/**
 * A microversion header for an operation served from 1.`min` on: mostly one at or above
 * `min`, sometimes any (so 404/405 below the minimum), latest, none, or malformed.
 */
export function pickVersion(rng: Rng, min = 0): string | undefined {
  return rng.weighted<() => string | undefined>([
    [80, () => `1.${rng.int(min, 39)}`],
    [6, () => `1.${rng.int(0, 39)}`],
    [6, () => 'latest'],
    [4, () => undefined],
    [4, () => rng.pick(INVALID_VERSIONS)],
  ])();
}

/** The minor number a header resolves to on a conforming server (NaN: not a version). */
export function minorOf(version: string | undefined): number {
  if (version === undefined) return 0;
  if (version === 'latest') return 39;
  const m = /^\s*1\.(\d+)\s*$/.exec(version);
  return m ? Number(m[1]) : Number.NaN;
}

/** A provider name: mostly from a small pool (duplicates on purpose), sometimes invalid. */
export function pickName(rng: Rng): unknown {
  return rng.weighted<() => unknown>([
    [85, () => `rp-${rng.int(0, 15)}`],
    [4, () => ''],
    [3, () => 'x'.repeat(rng.pick([200, 201]))],
    [3, () => `név-${rng.int(0, 3)} ☃`],
    [3, () => rng.int(0, 9)],
    [2, () => null],
  ])();
}
