/** A flavor extra spec key placement cares about: `resources[SUFFIX]:RC` or `trait[SUFFIX]:TRAIT`. */
export interface PlacementSpecKey {
  readonly kind: 'resources' | 'trait';
  /** "" for the unsuffixed group, else "1", "2", "_NET", ... (Nova's granular request groups). */
  readonly suffix: string;
  /** The resource class or trait name. */
  readonly name: string;
}

// NOTE: Nova accepts numeric suffixes and, since Train, `_` + up to 64 of [A-Z0-9_].
const KEY = /^(resources|trait)([1-9][0-9]*|_[A-Z0-9_]{1,64})?:([A-Za-z0-9_]+)$/;
const NAME = /^[A-Z0-9_]+$/;

/** Parses a key; undefined for keys of other scopes (`hw:`, `aggregate_instance_extra_specs:`...). */
export function parsePlacementSpecKey(key: string): PlacementSpecKey | undefined {
  const m = KEY.exec(key);
  if (m === null) return undefined;
  const [, kind, suffix, name] = m;
  if (!NAME.test(name ?? '')) return undefined;
  return { kind: kind as 'resources' | 'trait', suffix: suffix ?? '', name: name as string };
}
