import type { FilterDiagnosis } from '@cellsched/wire';
import type { SchedulingContext } from '../context';
import type { HostState } from '../host-state';
import type { HostFilter } from './types';

/** The hosts that passed every filter, and one diagnosis line per filter that ran. */
export interface FilterOutcome {
  readonly hosts: HostState[];
  readonly diagnosis: FilterDiagnosis[];
}

/** "1 host", "3 hosts". */
export function hostsCount(n: number): string {
  return `${n} host${n === 1 ? '' : 's'}`;
}

/** "disabled (3), down (1)": the reasons, most frequent first (ties by text, so output is stable). */
export function summarizeReasons(reasons: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([ra, a], [rb, b]) => b - a || ra.localeCompare(rb))
    .map(([r, n]) => `${r} (${hostsCount(n)})`)
    .join('; ');
}

/**
 * Nova's filter handler: runs the filters in the configured order, each on the survivors of the
 * previous one, recording how many hosts each removed and why. Stops at the first filter that
 * leaves no host (later filters would only report 0 -> 0).
 */
export function runFilters(hosts: readonly HostState[], filters: readonly HostFilter[], ctx: SchedulingContext): FilterOutcome {
  let current = hosts.slice();
  const diagnosis: FilterDiagnosis[] = [];
  for (const filter of filters) {
    if (current.length === 0) break;
    const passed: HostState[] = [];
    const reasons: string[] = [];
    const passes = filter.forRequest?.(ctx) ?? ((host: HostState) => filter.hostPasses(host, ctx));
    for (const host of current) {
      const result = passes(host);
      if (result.pass) passed.push(host);
      else reasons.push(result.reason);
    }
    diagnosis.push({ filter: filter.name, hostsBefore: current.length, hostsAfter: passed.length, reason: summarizeReasons(reasons) });
    current = passed;
  }
  return { hosts: current, diagnosis };
}
