import type { FilterDiagnosis, RequestSpec } from '@cellsched/wire';
import { hostsCount } from '../filters/filter-pipeline';
import type { HostState } from '../host-state';

interface Step {
  readonly name: string;
  readonly applies: (spec: RequestSpec, hosts: readonly HostState[]) => boolean;
  readonly keep: (host: HostState, spec: RequestSpec) => boolean;
  readonly reason: string;
}

/**
 * The cell a request is restricted to (requested_destination.cell), or '' for any. Nova's host
 * manager: a move that may cross cells (`allow_cross_cell_move`) only prefers its cell
 * (CrossCellWeigher) and, like a boot, sees the enabled cells.
 */
const requestedCell = (spec: RequestSpec): string =>
  spec.requestedDestination?.allowCrossCellMove === true ? '' : (spec.requestedDestination?.cellUuid ?? '');

// NOTE: Nova's host manager reads hosts of enabled cells only (a request naming a cell gets that
// cell, disabled or not), strips ignore_hosts and honours requested_destination, before any
// filter; they are not configurable filters, so they are not in the registry.
const STEPS: readonly Step[] = [
  {
    name: 'disabled_cells',
    reason: 'host is in a disabled cell',
    applies: (_spec, hosts) => hosts.some((h) => h.record.cellDisabled),
    keep: (host, spec) => !host.record.cellDisabled || requestedCell(spec) === host.record.cellUuid,
  },
  {
    name: 'ignore_hosts',
    reason: "host is in the request's ignore_hosts",
    applies: (spec) => spec.ignoreHosts.length > 0,
    keep: (host, spec) => !spec.ignoreHosts.includes(host.record.host),
  },
  {
    name: 'requested_destination',
    reason: 'host is not the requested destination',
    applies: (spec) => spec.requestedDestination !== undefined,
    keep: (host, spec) => {
      const d = spec.requestedDestination;
      return (
        d === undefined ||
        ((d.host === '' || d.host === host.record.host) &&
          (d.node === '' || d.node === host.record.nodename) &&
          (requestedCell(spec) === '' || requestedCell(spec) === host.record.cellUuid))
      );
    },
  },
];

/** Drops hosts of disabled cells, applies ignore_hosts and requested_destination (host, node, cell), with one diagnosis line each. */
export function restrictToRequestedHosts(
  hosts: readonly HostState[],
  spec: RequestSpec,
): { hosts: HostState[]; diagnosis: FilterDiagnosis[] } {
  let current = hosts.slice();
  const diagnosis: FilterDiagnosis[] = [];
  for (const step of STEPS) {
    if (!step.applies(spec, current)) continue;
    const kept = current.filter((h) => step.keep(h, spec));
    const removed = current.length - kept.length;
    diagnosis.push({
      filter: step.name,
      hostsBefore: current.length,
      hostsAfter: kept.length,
      reason: removed > 0 ? `${step.reason} (${hostsCount(removed)})` : '',
    });
    current = kept;
  }
  return { hosts: current, diagnosis };
}
