import type { HostState } from '../host-state';

/**
 * Nova's get_weight_multiplier: an aggregate of the host may override the configured multiplier
 * with metadata `<option>=<float>`; with several, the smallest wins; unparsable values are ignored.
 */
export function weightMultiplier(host: HostState, option: string, configured: number): number {
  let min: number | undefined;
  // NOTE: a plain loop: this runs once per host and weigher on every decision (hot path).
  for (const agg of host.record.aggregates) {
    const raw = agg.metadata[option];
    if (raw === undefined || raw.trim() === '') continue;
    const value = Number(raw);
    if (Number.isFinite(value) && (min === undefined || value < min)) min = value;
  }
  return min ?? configured;
}
