import type { AllocationCandidate, FilterDiagnosis } from '@cellsched/wire';
import type { ClaimConsumer } from '../../ports';
import type { SchedulingContext } from '../context';
import { hostsCount, runFilters } from '../filters/filter-pipeline';
import type { HostFilter } from '../filters/types';
import { consumeFromRequest, type HostState } from '../host-state';
import type { Prng } from '../prng';
import { orderForClaim } from '../weighers/host-order';
import type { HostWeigher } from '../weighers/types';
import { weighHosts } from '../weighers/weigh-hosts';
import { claimOnHost, type ClaimDeps } from './claim-on-host';
import { addGroupMember } from './group-state';
import { refreshRemaining } from './refresh-after-refusal';

/** The configured units and knobs one decision runs with. */
export interface Pipeline {
  readonly filters: readonly HostFilter[];
  readonly weighers: readonly HostWeigher[];
}

/** One instance's claim. */
export interface Placement {
  readonly instanceUuid: string;
  readonly host: HostState;
  readonly candidate: AllocationCandidate;
}

/** Every instance placed, or the diagnosis of the first one that could not be. */
export type PlaceResult =
  | { readonly kind: 'placed'; readonly placements: Placement[]; readonly lastRanking: Ranking }
  | { readonly kind: 'no_valid_host'; readonly reason: string; readonly diagnosis: FilterDiagnosis[] };

/** Mutable counters of one request (observability). */
export interface ClaimStats {
  retries: number;
}

/** The hosts of one ranking: `weighed` heaviest first, `ordered` the claim order (subset pick applied). */
export interface Ranking {
  readonly weighed: HostState[];
  readonly ordered: HostState[];
  readonly diagnosis: FilterDiagnosis[];
  /** The heaviest few hosts with their weights (why the chosen host won: traces, logs). */
  readonly top: readonly WeighedLine[];
}

/** One host of a ranking as an explanation shows it. */
export interface WeighedLine {
  readonly host: string;
  readonly weight: number;
}

/** How many of a ranking's heaviest hosts an explanation lists. */
const TOP_HOSTS = 5;

/** Filter, weigh and order the hosts for one instance (Nova's `_get_sorted_hosts`). */
export function rankHosts(hosts: readonly HostState[], pipeline: Pipeline, ctx: SchedulingContext, rng: Prng | undefined): Ranking {
  const filtered = runFilters(hosts, pipeline.filters, ctx);
  const weighed = weighHosts(filtered.hosts, pipeline.weighers, ctx.policy.weightMultipliers, ctx);
  const ordered =
    rng === undefined ? weighed : orderForClaim(weighed, ctx.policy.hostSubsetSize, ctx.policy.shuffleBestSameWeighedHosts, rng);
  const top = weighed.slice(0, TOP_HOSTS).map((w) => ({ host: w.host.record.host, weight: w.weight }));
  return { weighed: weighed.map((w) => w.host), ordered: ordered.map((w) => w.host), diagnosis: filtered.diagnosis, top };
}

function claimDiagnosis(tried: number, noCapacity: number, exhausted: number, groupRefused: number): FilterDiagnosis {
  const parts = [
    noCapacity > 0 ? `no capacity left (${hostsCount(noCapacity)})` : '',
    exhausted > 0 ? `concurrent updates exhausted retries (${hostsCount(exhausted)})` : '',
    groupRefused > 0 ? `server group policy refused by placement (${hostsCount(groupRefused)})` : '',
  ];
  return { filter: 'placement_claim', hostsBefore: tried, hostsAfter: 0, reason: parts.filter((p) => p !== '').join('; ') };
}

/** Tries the ranked hosts in order until one claim succeeds; updates the host and group in memory. */
async function placeOne(
  ordered: readonly HostState[],
  consumer: ClaimConsumer,
  ctx: SchedulingContext,
  deps: ClaimDeps,
  stats: ClaimStats,
): Promise<Placement | FilterDiagnosis> {
  let noCapacity = 0;
  let exhausted = 0;
  let groupRefused = 0;
  let remaining = ordered;
  while (remaining.length > 0) {
    const [host, ...rest] = remaining as [HostState, ...HostState[]];
    remaining = rest;
    const result = await claimOnHost(host, consumer, deps);
    stats.retries += result.retries;
    if (result.kind === 'claimed') {
      consumeFromRequest(host, result.candidate);
      addGroupMember(ctx.group, host.record.host);
      return { instanceUuid: consumer.consumerUuid, host, candidate: result.candidate };
    }
    if (result.kind === 'no_capacity') {
      noCapacity += 1;
      // NOTE: the view is stale; one fresh read prunes every other full host instead of a refused claim each.
      const before = remaining.length;
      if (before > 0) remaining = await refreshRemaining(remaining, deps);
      noCapacity += before - remaining.length;
    } else if (result.kind === 'group_policy') {
      // NOTE: another member holds a claim there that this decision's group state did not see; the view is not stale otherwise.
      groupRefused += 1;
    } else {
      exhausted += 1;
    }
  }
  return claimDiagnosis(ordered.length, noCapacity, exhausted, groupRefused);
}

/**
 * For each instance in order: filter and weigh the hosts against the state left by the previous
 * instances' claims, then claim on the best host, falling back down the ranking. Stops at the
 * first instance that cannot be placed (the caller releases every claim: all-or-nothing).
 */
export async function placeInstances(
  hosts: readonly HostState[],
  instanceUuids: readonly string[],
  pipeline: Pipeline,
  ctx: SchedulingContext,
  rng: Prng,
  deps: ClaimDeps,
  stats: ClaimStats,
): Promise<PlaceResult> {
  const placements: Placement[] = [];
  let ranked: Ranking = { weighed: [], ordered: [], diagnosis: [], top: [] };
  for (const [index, instanceUuid] of instanceUuids.entries()) {
    ranked = rankHosts(hosts, pipeline, ctx, rng);
    const label = instanceUuids.length > 1 ? ` for instance ${index + 1} of ${instanceUuids.length}` : '';
    if (ranked.ordered.length === 0) {
      return { kind: 'no_valid_host', reason: `no host passed the filters${label}`, diagnosis: ranked.diagnosis };
    }
    const consumer: ClaimConsumer = {
      consumerUuid: instanceUuid,
      projectId: ctx.spec.projectId,
      userId: ctx.spec.userId,
      group: ctx.group,
    };
    const placed = await placeOne(ranked.ordered, consumer, ctx, deps, stats);
    if ('filter' in placed) {
      return { kind: 'no_valid_host', reason: `no host could be claimed${label}`, diagnosis: [...ranked.diagnosis, placed] };
    }
    placements.push(placed);
  }
  return { kind: 'placed', placements, lastRanking: ranked };
}
