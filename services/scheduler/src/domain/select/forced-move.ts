import type { FilterDiagnosis, Selection } from '@cellsched/wire';
import type { HostStateSnapshot } from '../../ports';
import type { SchedulingContext } from '../context';
import { seededPrng } from '../prng';
import { resourcesFromRequestSpec } from '../request-filters/resources-from-request-spec';
import type { ClaimDeps } from './claim-on-host';
import { gatherHosts, type RootIndexes } from './gather-hosts';
import { placeInstances, type Pipeline } from './place-instances';
import { toSelection } from './selection';
import type { SelectDestinationsRequest } from './validate-request';

/** No filter and no weigher: a forced destination is not judged, only claimed. */
const NO_PIPELINE: Pipeline = { filters: [], weighers: [] };

/** What a forced move answers (the core adds the claim retries and maps it to its result). */
export type ForcedMoveResult =
  | { readonly kind: 'selected'; readonly selection: Selection; readonly diagnosis: FilterDiagnosis[] }
  | { readonly kind: 'no_valid_host'; readonly reason: string; readonly diagnosis: FilterDiagnosis[] };

/** Nova's NoValidHost reason when a forced destination cannot hold the instance (scheduler utils' claim_resources_on_destination). */
export function forcedNoCapacityReason(instanceUuid: string, host: string): string {
  return `Unable to move instance ${instanceUuid} to host ${host}. There is not enough capacity on the host for the instance.`;
}

/**
 * A forced destination (Nova's evacuate or live migration with `force`: Nova's conductor bypasses
 * the scheduler and copies the source allocation to that host): placement's candidates for the
 * instance's resources alone (no request filter adds traits, aggregates or zones, as a copied
 * allocation has none), narrowed to the requested host in the instance's cell (never the source),
 * then the move claim there, retried on a concurrent update. No host filter and no weigher run,
 * and no alternate is returned. Placement still refuses a host without the capacity: NoValidHost
 * with Nova's message and the diagnosis. The caller undoes the move on NoValidHost or a throw.
 */
export async function placeForcedMove(
  req: SelectDestinationsRequest,
  ctx: SchedulingContext,
  snapshot: HostStateSnapshot,
  indexes: RootIndexes,
  claim: Omit<ClaimDeps, 'query' | 'snapshot'>,
  stats: { retries: number },
): Promise<ForcedMoveResult> {
  const instanceUuid = req.instanceUuids[0] as string;
  const host = req.spec.requestedDestination?.host ?? '';
  const gathered = await gatherHosts({ ...ctx, aggregates: [] }, [resourcesFromRequestSpec], snapshot, indexes);
  if (gathered.kind === 'no_valid_host' || gathered.hosts.length === 0) {
    return { kind: 'no_valid_host', reason: forcedNoCapacityReason(instanceUuid, host), diagnosis: gathered.diagnosis };
  }
  const deps: ClaimDeps = { ...claim, snapshot, query: gathered.query };
  const placed = await placeInstances(gathered.hosts, [instanceUuid], NO_PIPELINE, ctx, seededPrng(req.spec.seed), deps, stats);
  if (placed.kind === 'no_valid_host') {
    return {
      kind: 'no_valid_host',
      reason: forcedNoCapacityReason(instanceUuid, host),
      diagnosis: [...gathered.diagnosis, ...placed.diagnosis],
    };
  }
  const p = placed.placements[0];
  if (p === undefined) throw new Error(`forced move of ${instanceUuid}: placed without a placement`);
  return { kind: 'selected', selection: toSelection(p.host, p.candidate, req.allocationRequestVersion), diagnosis: gathered.diagnosis };
}
