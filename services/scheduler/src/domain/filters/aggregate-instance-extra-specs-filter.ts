import type { HostState } from '../host-state';
import { matchExtraSpec } from './extra-specs-ops';
import { fail, type HostFilter, PASS } from './types';

const SCOPE = 'aggregate_instance_extra_specs';

/** Nova's aggregate_metadata_get_by_host: metadata key -> every value among the host's aggregates. */
export function aggregateMetadataByKey(host: HostState): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const agg of host.record.aggregates) {
    for (const [k, v] of Object.entries(agg.metadata)) byKey.set(k, [...(byKey.get(k) ?? []), v]);
  }
  return byKey;
}

/** The aggregate metadata key an extra spec constrains, or undefined when another scope owns it. */
export function scopedKey(key: string): string | undefined {
  const colon = key.indexOf(':');
  if (colon < 0) return key;
  return key.slice(0, colon) === SCOPE ? key.slice(colon + 1) : undefined;
}

/**
 * Nova's AggregateInstanceExtraSpecsFilter: every flavor extra spec that is unscoped or scoped
 * `aggregate_instance_extra_specs:` must be matched (extra_specs_ops syntax) by at least one value
 * of that key among the host's aggregates' metadata. NOTE: as in Nova, unscoped keys count too.
 */
export const aggregateInstanceExtraSpecsFilter: HostFilter = {
  name: 'AggregateInstanceExtraSpecsFilter',
  hostPasses(host, ctx) {
    const entries = Object.entries(ctx.flavor.extraSpecs);
    if (entries.length === 0) return PASS;
    const metadata = aggregateMetadataByKey(host);
    for (const [key, req] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const aggKey = scopedKey(key);
      if (aggKey === undefined) continue;
      const values = metadata.get(aggKey) ?? [];
      if (values.length === 0) return fail(`no aggregate of the host has metadata ${aggKey}`);
      if (!values.some((v) => matchExtraSpec(v, req))) return fail(`aggregate metadata ${aggKey} does not match "${req}"`);
    }
    return PASS;
  },
};
