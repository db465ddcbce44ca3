import type { HostState } from '../host-state';
import { matchExtraSpec } from './extra-specs-ops';
import { fail, type FilterResult, type HostFilter, PASS } from './types';

const SCOPE = 'capabilities';

/** Nova's HostState attributes a capability may name (its first segment), from the node's record. */
const BY_ATTRIBUTE: Readonly<Record<string, (h: HostState) => unknown>> = {
  host: (h) => h.record.host,
  nodename: (h) => h.record.nodename,
  hypervisor_hostname: (h) => h.record.nodename,
  uuid: (h) => h.record.uuid,
  cell_uuid: (h) => h.record.cellUuid,
  hypervisor_type: (h) => h.record.hypervisorType,
  hypervisor_version: (h) => h.record.hypervisorVersion,
  cpu_info: (h) => h.record.cpuInfo,
  vcpus_total: (h) => h.record.vcpus,
  vcpus_used: (h) => h.record.vcpusUsed,
  total_usable_ram_mb: (h) => h.record.memoryMb,
  free_ram_mb: (h) => h.record.memoryMb - h.record.memoryMbUsed,
  total_usable_disk_gb: (h) => h.record.localGb,
  free_disk_mb: (h) => (h.record.localGb - h.record.localGbUsed) * 1024,
  disk_mb_used: (h) => h.record.localGbUsed * 1024,
  num_instances: (h) => Number.parseInt(h.record.stats.num_instances ?? '0', 10) || 0,
  num_io_ops: (h) => h.record.numIoOps,
  failed_builds: (h) => h.record.failedBuilds,
};
// NOTE: a Map, so a spec named after an Object.prototype member (`constructor`) is no attribute.
const ATTRIBUTES: ReadonlyMap<string, (h: HostState) => unknown> = new Map(Object.entries(BY_ATTRIBUTE));

/** Python's str() of a value, as Nova compares it: lists and dicts as their repr, booleans capitalized. */
function pyStr(v: unknown, nested = false): string {
  if (typeof v === 'string') return nested ? `'${v}'` : v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'None';
  if (Array.isArray(v)) return `[${v.map((x) => pyStr(x, true)).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `'${k}': ${pyStr(x, true)}`)
      .join(', ')}}`;
  return String(v);
}

/** A `stats` key of the host (own keys only: a stat may be called `constructor`). */
function stat(host: HostState, key: string): string | undefined {
  return Object.hasOwn(host.record.stats, key) ? host.record.stats[key] : undefined;
}

/** One level down a capability: a JSON text is read as JSON first; only an object has keys. */
function child(cap: unknown, key: string): unknown {
  let obj = cap;
  if (typeof obj === 'string') {
    try {
      obj = JSON.parse(obj);
    } catch {
      return undefined;
    }
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/**
 * Nova's _get_capabilities: the first segment is a host attribute, else a `stats` key; the next
 * ones are keys of the (JSON) object found so far. Undefined when any step finds nothing.
 */
export function capability(host: HostState, scope: readonly string[]): unknown {
  const [first, ...rest] = scope;
  if (first === undefined) return undefined;
  let cap: unknown = ATTRIBUTES.get(first)?.(host) ?? stat(host, first);
  for (const key of rest) {
    if (cap === undefined || cap === null) return undefined;
    cap = child(cap, key);
  }
  return cap === null ? undefined : cap;
}

/** One extra spec this filter may check: the capability path and the requirement. */
interface CapabilitySpec {
  readonly scope: readonly string[];
  readonly req: string;
  /** Unscoped (Nova's backward compatibility): checked only on a host with such an attribute or stat. */
  readonly unscoped: boolean;
}

/**
 * The flavor's extra specs this filter reads, sorted by key (the first failure reported is
 * stable), with Nova's `hw:maxphysaddr_bits` rewritten as the capability it means; other scopes
 * (`hw:`, `resources:`, `trait:`...) are dropped.
 */
export function capabilitySpecs(extraSpecs: Readonly<Record<string, string>>): CapabilitySpec[] {
  const entries = Object.entries(extraSpecs).filter(([k]) => k !== 'hw:maxphysaddr_bits');
  const bits = extraSpecs['hw:maxphysaddr_bits'];
  if (bits !== undefined) entries.push(['capabilities:cpu_info:maxphysaddr:bits', `>= ${bits}`]);
  const specs: CapabilitySpec[] = [];
  for (const [key, req] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const scope = key.split(':');
    if (scope.length === 1) specs.push({ scope, req, unscoped: true });
    else if (scope[0] === SCOPE) specs.push({ scope: scope.slice(1), req, unscoped: false });
  }
  return specs;
}

/** Whether `host` matches every capability spec. Pure. */
function hostMatches(host: HostState, specs: readonly CapabilitySpec[]): FilterResult {
  for (const { scope, req, unscoped } of specs) {
    // NOTE: as in Nova, an unscoped key counts only when the host has such an attribute or stat.
    if (unscoped && !ATTRIBUTES.has(scope[0] as string) && stat(host, scope[0] as string) === undefined) continue;
    const cap = capability(host, scope);
    if (cap === undefined) return fail(`host has no capability ${scope.join(':')}`);
    if (!matchExtraSpec(pyStr(cap), req)) return fail(`capability ${scope.join(':')} does not match "${req}"`);
  }
  return PASS;
}

/**
 * Nova's ComputeCapabilitiesFilter: every flavor extra spec scoped `capabilities:` (and every
 * unscoped one naming a host attribute or stat) must be matched, extra_specs_ops syntax, by the
 * host's capability: an attribute such as `hypervisor_type`, `vcpus_total`, `free_ram_mb`,
 * `num_instances`, a `stats` key, or a nested key of `cpu_info` (`capabilities:cpu_info:arch`).
 * NOTE: the values are the compute's last report, as Nova's filter (run once per request) sees
 * them: a multi-create's earlier instances do not change them.
 */
export const computeCapabilitiesFilter: HostFilter = {
  name: 'ComputeCapabilitiesFilter',
  hostPasses(host, ctx): FilterResult {
    return hostMatches(host, capabilitySpecs(ctx.flavor.extraSpecs));
  },
  // NOTE: the flavor's specs are read once per pass, not once per host (a pass may filter 1,000 hosts).
  forRequest(ctx) {
    const specs = capabilitySpecs(ctx.flavor.extraSpecs);
    return (host) => hostMatches(host, specs);
  },
};
