// NOTE: Nova's nova/objects/fields.py canonicalize() tables for Architecture, HVType and VMMode.
const ARCH_ALIASES: Readonly<Record<string, string>> = {
  i386: 'i686',
  i486: 'i686',
  i586: 'i686',
  x86_32: 'i686',
  amd64: 'x86_64',
  x64: 'x86_64',
};
const HV_ALIASES: Readonly<Record<string, string>> = { xapi: 'xen' };
const VM_MODE_ALIASES: Readonly<Record<string, string>> = { pv: 'xen', hv: 'hvm', baremetal: 'hvm' };

function canonical(table: Readonly<Record<string, string>>, value: string | undefined): string {
  if (value === undefined || value === '') return '';
  const lower = value.toLowerCase();
  return table[lower] ?? lower;
}

/** Canonical architecture ("amd64" -> "x86_64", "i386" -> "i686"); "" when unset. */
export const canonicalArch = (v: string | undefined): string => canonical(ARCH_ALIASES, v);
/** Canonical hypervisor type ("xapi" -> "xen"); "" when unset. */
export const canonicalHvType = (v: string | undefined): string => canonical(HV_ALIASES, v);
/** Canonical VM mode ("hv" -> "hvm", "pv" -> "xen"); "" when unset. */
export const canonicalVmMode = (v: string | undefined): string => canonical(VM_MODE_ALIASES, v);

/** Nova's convert_version_to_str: 6002001 -> "6.2.1" (three digits per part). */
export function versionIntToString(version: number): string {
  const parts: number[] = [];
  let rest = Math.floor(version);
  while (rest > 0) {
    parts.unshift(rest % 1000);
    rest = Math.floor(rest / 1000);
  }
  return parts.length === 0 ? '0' : parts.join('.');
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i += 1) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const VERSION_OPS: Readonly<Record<string, (cmp: number) => boolean>> = {
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
  '==': (c) => c === 0,
  '!=': (c) => c !== 0,
};

/**
 * Does `version` satisfy a predicate such as ">= 6.0" or ">=6.0, <7.0" (Nova's VersionPredicate
 * on `img_hv_requested_version`)? A malformed predicate is not satisfied.
 */
export function versionSatisfies(version: string, predicate: string): boolean {
  return predicate.split(',').every((clause) => {
    const m = /^\s*(<=|>=|==|!=|<|>)\s*([0-9]+(?:\.[0-9]+)*)\s*$/.exec(clause);
    if (m === null) return false;
    const op = VERSION_OPS[m[1] as string] as (cmp: number) => boolean;
    return op(compareVersions(version, m[2] as string));
  });
}
