import type { HostState } from '../host-state';

/**
 * Nova's get_weight_multiplier: an aggregate of the host may override the configured multiplier
 * with metadata `<option>=<float>`; with several, the smallest wins; unparsable values are ignored.
 */
export function weightMultiplier(host: HostState, option: string, configured: number): number {
  const values = host.record.aggregates
    .map((a) => a.metadata[option])
    .filter((v): v is string => v !== undefined && v.trim() !== '')
    .map(Number)
    .filter((n) => Number.isFinite(n));
  return values.length === 0 ? configured : Math.min(...values);
}
