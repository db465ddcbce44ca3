import { PlacementError } from './errors';
import { pyRepr } from './py-repr';

/**
 * Microversions, in one commented place (placement/microversion.py).
 * 1.1 aggregates; 1.2 resource classes; 1.3 member_of; 1.4 resources filter;
 * 1.5 DELETE all inventories; 1.6 traits; 1.7 PUT resource class bodiless;
 * 1.8 project/user on allocations; 1.9 /usages; 1.10 allocation candidates;
 * 1.11 allocations link; 1.12 dict allocations; 1.13 POST /allocations;
 * 1.14 nested providers; 1.15 last-modified/cache-control; 1.16 limit;
 * 1.17 required (candidates); 1.18 required (providers); 1.19 aggregate generation;
 * 1.20 POST /resource_providers returns body; 1.21 member_of=in:; 1.22 forbidden traits;
 * 1.23 error codes; 1.24 repeated member_of; 1.25 granular; 1.26 reserved == total;
 * 1.27 all inventory in summaries; 1.28 consumer generation; 1.29 nested candidates;
 * 1.30 reshaper; 1.31 in_tree (candidates); 1.32 !member_of; 1.33 any suffix;
 * 1.34 mappings; 1.35 root_required; 1.36 same_subtree; 1.37 re-parenting;
 * 1.38 consumer types; 1.39 required=in:.
 */
export interface Microversion {
  readonly major: number;
  readonly minor: number;
}

export const MIN_VERSION: Microversion = { major: 1, minor: 0 };
export const MAX_VERSION: Microversion = { major: 1, minor: 39 };

export const versionString = (v: Microversion): string => `${v.major}.${v.minor}`;

/** True when `v` is at least `major.minor`. */
export function atLeast(v: Microversion, minor: number, major = 1): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

const compare = (a: Microversion, b: Microversion): number => (a.major !== b.major ? a.major - b.major : a.minor - b.minor);

/**
 * Pick the `placement` entry of an OpenStack-API-Version header (comma-separated list) as
 * microversion_parse does: the LAST entry naming the service wins, entries without a
 * version are skipped.
 */
export function extractPlacementVersion(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(',').reverse()) {
    const m = /^(\S+)\s+([\s\S]+)$/.exec(part.trim());
    if (m?.[1]?.toLowerCase() === 'placement') return (m[2] ?? '').trim();
  }
  return undefined;
}

/** Python's `int(text)`: surrounding whitespace, a sign and `_` between digits allowed. */
function pyInt(text: string): bigint {
  const t = text.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) throw new Error(`invalid literal for int() with base 10: ${pyRepr(text)}`);
  return BigInt(t.replace(/_/g, ''));
}

/** microversion_parse's parse_version_string: `X.Y`, each part what Python's int() takes. */
function parseVersionString(raw: string): { major: bigint; minor: bigint } {
  const dot = raw.indexOf('.');
  const parts = dot < 0 ? [raw] : [raw.slice(0, dot), raw.slice(dot + 1)];
  try {
    const ints = parts.map(pyInt);
    if (ints.length < 2) throw new Error("Version.__new__() missing 1 required positional argument: 'minor'");
    return { major: ints[0] ?? 0n, minor: ints[1] ?? 0n };
  } catch (e) {
    throw new PlacementError(400, `Invalid microversion: invalid version string: ${raw}; ${(e as Error).message}`);
  }
}

/**
 * Resolve the requested microversion as microversion_parse does: absent or empty → minimum,
 * `latest` → maximum. 400 when the string is not two integers; 406 (whose body names
 * min/max_version) for two integers that are not one of our versions (`1.-1`, `1.40`).
 */
export function negotiate(header: string | undefined): Microversion {
  const raw = extractPlacementVersion(header);
  if (raw === undefined || raw === '') return MIN_VERSION;
  if (raw === 'latest') return MAX_VERSION;
  const { major, minor } = parseVersionString(raw);
  const v = { major: Number(major), minor: Number(minor) };
  const known = major === 1n && minor >= 0n && minor <= BigInt(MAX_VERSION.minor);
  if (!known || compare(v, MIN_VERSION) < 0) throw new PlacementError(406, `Invalid microversion: Unacceptable version header: ${raw}`);
  return v;
}
