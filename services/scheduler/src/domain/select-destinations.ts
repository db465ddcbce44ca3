import type { FilterDiagnosis, GetAllocationCandidatesRequest, InstanceGroup, Selection } from '@cellsched/wire';
import type { SchedulerPorts } from '../ports';
import { hintedInstances, type HintedHosts, type SchedulingContext } from './context';
import { InvalidSchedulerPolicy, InvalidSchedulerRequest } from './errors';
import { FILTER_REGISTRY, unknownFilterNames } from './filters/registry';
import type { HostFilter } from './filters/types';
import { DEFAULT_POLICY, policyNumberErrors, type SchedulerPolicy } from './policy';
import { seededPrng, shuffled } from './prng';
import { REQUEST_FILTERS } from './request-filters/registry';
import type { RequestFilter } from './request-filters/types';
import { alternatesFor } from './select/alternates';
import { placeForcedMove } from './select/forced-move';
import { gatherHosts, RootIndexes } from './select/gather-hosts';
import { groupState } from './select/group-state';
import { moveSpec } from './select/move';
import {
  type ClaimStats,
  type Pipeline,
  type Placement,
  placeInstances,
  rankHosts,
  type Ranking,
  type WeighedLine,
} from './select/place-instances';
import { toSelection } from './select/selection';
import { type SelectDestinationsRequest, validateRequest } from './select/validate-request';
import type { HostWeigher } from './weighers/types';
import { WEIGHER_REGISTRY, weigherProblems } from './weighers/registry';
import type { HostState } from './host-state';

export type { SelectDestinationsRequest } from './select/validate-request';

/**
 * The answer of select_destinations. NoValidHost is an expected outcome, so it is a value (the
 * adapter maps it to FAILED_PRECONDITION + Failure{code: "scheduler.no_valid_host"}).
 */
export type SelectDestinationsResult =
  | {
      readonly kind: 'selected';
      readonly destinations: Selection[][];
      readonly claimRetries: number;
      readonly explain: DecisionExplanation;
    }
  | { readonly kind: 'no_valid_host'; readonly reason: string; readonly diagnosis: FilterDiagnosis[]; readonly claimRetries: number };

/**
 * Why the chosen hosts won, for traces and logs: each stage's host count (placement's candidates,
 * the snapshot, pre-filters and filters, last instance's ranking) and the heaviest hosts of the
 * last ranking with their weights.
 */
export interface DecisionExplanation {
  readonly diagnosis: readonly FilterDiagnosis[];
  readonly top: readonly WeighedLine[];
  /** True when only a sample of the candidates (`host_sample_size`) was weighed. */
  readonly sampled: boolean;
}

/** Added to the request's seed for the sample's own generator. */
const SAMPLE_SEED_OFFSET = 0x5a3e;

/** The state of one decision under way. */
interface DecisionRun {
  readonly ctx: SchedulingContext;
  readonly query: GetAllocationCandidatesRequest;
  readonly stats: ClaimStats;
}

/** Extension point: other registries (new units) without touching the core. */
export interface SchedulerUnits {
  readonly requestFilters?: readonly RequestFilter[];
  readonly filters?: ReadonlyMap<string, HostFilter>;
  readonly weighers?: ReadonlyMap<string, HostWeigher>;
}

/** Every problem of a policy against the registries, listed at once (config validation at start). */
export function policyProblems(policy: SchedulerPolicy, units: SchedulerUnits = {}): string[] {
  return [
    ...policyNumberErrors(policy),
    ...unknownFilterNames(policy.enabledFilters, units.filters ?? FILTER_REGISTRY),
    ...weigherProblems(policy.enabledWeighers, policy.weightMultipliers, units.weighers ?? WEIGHER_REGISTRY),
  ];
}

/**
 * The scheduler's domain core: Nova's `select_destinations` with the claim made in the scheduler
 * (seed 003). Stateless between calls; several instances (replicas) may share the same ports.
 */
export class SchedulerCore {
  private readonly pipeline: Pipeline;
  private readonly requestFilters: readonly RequestFilter[];
  private readonly indexes = new RootIndexes();

  /** Throws InvalidSchedulerPolicy (`scheduler.config.invalid`) listing every problem of the policy. */
  constructor(
    private readonly ports: SchedulerPorts,
    private readonly policy: SchedulerPolicy = DEFAULT_POLICY,
    units: SchedulerUnits = {},
  ) {
    const problems = policyProblems(policy, units);
    if (problems.length > 0) throw new InvalidSchedulerPolicy(problems);
    const filters = units.filters ?? FILTER_REGISTRY;
    const weighers = units.weighers ?? WEIGHER_REGISTRY;
    this.pipeline = {
      filters: policy.enabledFilters.map((n) => filters.get(n) as HostFilter),
      weighers: policy.enabledWeighers.map((n) => weighers.get(n) as HostWeigher),
    };
    this.requestFilters = units.requestFilters ?? REQUEST_FILTERS;
  }

  /**
   * Selects and claims one host per instance, plus `numAlternates` unclaimed alternates in the
   * chosen host's cell. Idempotent per instance uuid: claims replace whatever the consumer held,
   * so a retried request never doubles a claim. All-or-nothing: every NoValidHost, and every error
   * thrown after validation, releases all the request's consumers (inside the group lock when there
   * is one). Throws InvalidSchedulerRequest for bad input (nothing written or released), and whatever
   * the ports throw (GroupLock errors included: nothing is claimed before the lock is held).
   *
   * A move (`req.move`, one instance) is the same decision with three differences: the source host
   * is excluded unless `allowSameHost` ({@link moveSpec}); the claim is a move claim (the source
   * allocation goes to the migration consumer in the same write, Nova's two writes in one); and
   * what a NoValidHost or an error undoes is that move (`revertMove`: the instance holds its source
   * again), never a release, which would drop the instance's source allocation. A forced move
   * (`move.force`) claims the requested host without filters or weighers ({@link placeForcedMove}).
   */
  async selectDestinations(request: SelectDestinationsRequest): Promise<SelectDestinationsResult> {
    const flavor = validateRequest(request);
    const req = request.move === undefined ? request : { ...request, spec: moveSpec(request.spec, request.move) };
    if (req.move?.force === true) return this.settled(req, () => this.forced(req, flavor));
    const size = this.sampleSizeFor(req);
    if (size > 0) {
      // NOTE: a sample that cannot place the instance says nothing about the other hosts: start
      // over with all of them (that pass releases and diagnoses if it fails too). The sampled pass
      // holds no claim when it fails (one instance, no claim made).
      const quick = await this.attempt(req, flavor, size);
      if (quick.result.kind === 'selected') return quick.result;
      if (!quick.sampled) {
        await this.undo(req);
        return quick.result;
      }
    }
    return (await this.attempt(req, flavor, 0)).result;
  }

  /** A forced destination ({@link placeForcedMove}): the requested host claimed directly, no alternate. */
  private async forced(req: SelectDestinationsRequest, flavor: ReturnType<typeof validateRequest>): Promise<SelectDestinationsResult> {
    const ctx: SchedulingContext = {
      spec: req.spec,
      flavor,
      image: req.spec.image,
      policy: this.policy,
      now: this.ports.clock.now(),
      group: undefined,
    };
    const stats = { retries: 0 };
    const claim = {
      claimer: this.ports.claimer,
      maxConflictRetries: this.policy.claimConflictRetries,
      migrationUuid: req.move?.migrationUuid,
    };
    const r = await placeForcedMove(req, ctx, this.ports.snapshot, this.indexes, claim, stats);
    if (r.kind === 'no_valid_host') return { ...r, claimRetries: stats.retries };
    return {
      kind: 'selected',
      destinations: [[r.selection]],
      claimRetries: stats.retries,
      explain: { diagnosis: r.diagnosis, top: [], sampled: false },
    };
  }

  /**
   * Nomad's scoring limit applies to one instance without a server group or a pinned
   * destination: a multi-create or a group decision needs every host (in-request consumption,
   * the group's hosts), a pinned destination is one host that a sample would likely miss.
   */
  private sampleSizeFor(req: SelectDestinationsRequest): number {
    const spec = req.spec;
    // NOTE: a same_host hint names one host or a few, which a sample would likely miss
    const eligible =
      req.instanceUuids.length === 1 &&
      spec.instanceGroup === undefined &&
      spec.requestedDestination === undefined &&
      req.move === undefined &&
      !('same_host' in spec.schedulerHints);
    return eligible ? this.policy.hostSampleSize : 0;
  }

  /**
   * One pass of steps 1-6 over every candidate host (`sampleSize` 0) or a seeded sample of them.
   * With a sample, a NoValidHost is handed back without releasing (the caller decides).
   */
  private async attempt(
    req: SelectDestinationsRequest,
    flavor: ReturnType<typeof validateRequest>,
    sampleSize: number,
  ): Promise<{ result: SelectDestinationsResult; sampled: boolean }> {
    const base = { spec: req.spec, flavor, image: req.spec.image, policy: this.policy };
    const releaseOnNoValidHost = sampleSize === 0;
    // NOTE: the sample's generator is its own, so the decision's stream (shuffle, subset) is the one an unsampled pass uses.
    const sample = sampleSize > 0 ? { size: sampleSize, rng: seededPrng(req.spec.seed + SAMPLE_SEED_OFFSET) } : undefined;
    const gathered = await this.settled(
      req,
      async () => {
        const aggregates = await this.ports.snapshot.getAggregates();
        return gatherHosts({ ...base, aggregates }, this.requestFilters, this.ports.snapshot, this.indexes, sample);
      },
      releaseOnNoValidHost,
    );
    if (gathered.kind === 'no_valid_host') return { result: { ...gathered, claimRetries: 0 }, sampled: false };
    const group = req.spec.instanceGroup;
    const decide = (): Promise<SelectDestinationsResult> =>
      this.settled(
        req,
        async () => {
          const ctx: SchedulingContext = {
            ...base,
            now: this.ports.clock.now(),
            group: group === undefined ? undefined : groupState(group, await this.memberHosts(group, req)),
            hinted: await this.hintedHosts(req),
          };
          return this.decide(
            req,
            gathered.hosts,
            gathered.diagnosis,
            { ctx, query: gathered.query, stats: { retries: 0 } },
            gathered.sampled,
          );
        },
        releaseOnNoValidHost,
      );
    return {
      result: await (group === undefined ? decide() : this.ports.groupLock.withLock(group.uuid, decide)),
      sampled: gathered.sampled,
    };
  }

  /** Where the `same_host` / `different_host` hints' instances hold claims (one read per hint given; the moving instance itself excluded). */
  private async hintedHosts(req: SelectDestinationsRequest): Promise<HintedHosts | undefined> {
    const read = async (hint: 'same_host' | 'different_host'): Promise<ReadonlySet<string> | undefined> => {
      if (!(hint in req.spec.schedulerHints)) return undefined;
      const uuids = hintedInstances(req.spec, hint).filter((u) => !req.instanceUuids.includes(u));
      return uuids.length === 0 ? new Set() : this.ports.snapshot.getInstanceHosts(uuids);
    };
    const [sameHost, differentHost] = await Promise.all([read('same_host'), read('different_host')]);
    if (sameHost === undefined && differentHost === undefined) return undefined;
    return { ...(sameHost === undefined ? {} : { sameHost }), ...(differentHost === undefined ? {} : { differentHost }) };
  }

  /** Where the group's members hold claims; a moving instance is not its own neighbour (Nova: `get_hosts(exclude=[instance])`). */
  private memberHosts(group: InstanceGroup, req: SelectDestinationsRequest): Promise<ReadonlyMap<string, number>> {
    return req.move === undefined
      ? this.ports.snapshot.getGroupMemberHosts(group)
      : this.ports.snapshot.getGroupMemberHosts(group, req.instanceUuids);
  }

  /** Runs one stage; on NoValidHost or a throw, undoes the request's claims (idempotent). */
  private async settled<T extends { readonly kind: string }>(
    req: SelectDestinationsRequest,
    work: () => Promise<T>,
    releaseOnNoValidHost = true,
  ): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (err) {
      // NOTE: bad input (a malformed extra spec found while building the query) changes nothing.
      if (!(err instanceof InvalidSchedulerRequest)) await this.undoAfterError(req, err);
      throw err;
    }
    if (result.kind === 'no_valid_host' && releaseOnNoValidHost) await this.undo(req);
    return result;
  }

  /**
   * What a failed request leaves: a boot releases every consumer of the request; a move reverts it
   * (the instance holds its source again, also when a retried request had claimed a destination
   * before). Idempotent.
   */
  private undo(req: SelectDestinationsRequest): Promise<void> {
    if (req.move === undefined) return this.ports.claimer.release(req.instanceUuids);
    return this.ports.claimer.revertMove(req.instanceUuids[0] as string, req.move.migrationUuid);
  }

  private async decide(
    req: SelectDestinationsRequest,
    hosts: HostState[],
    prefix: FilterDiagnosis[],
    run: DecisionRun,
    sampled: boolean,
  ): Promise<SelectDestinationsResult> {
    // NOTE: Nomad-style: the host order is shuffled from the request's seed before weighing, so
    // equal weights break the same way for the same seed and differently across seeds.
    const rng = seededPrng(req.spec.seed);
    const ordered = shuffled(hosts, rng);
    const deps = {
      claimer: this.ports.claimer,
      snapshot: this.ports.snapshot,
      query: run.query,
      maxConflictRetries: this.policy.claimConflictRetries,
      migrationUuid: req.move?.migrationUuid,
    };
    const placed = await placeInstances(ordered, req.instanceUuids, this.pipeline, run.ctx, rng, deps, run.stats);
    if (placed.kind === 'no_valid_host') {
      return { kind: 'no_valid_host', reason: placed.reason, diagnosis: [...prefix, ...placed.diagnosis], claimRetries: run.stats.retries };
    }
    const explain = { diagnosis: [...prefix, ...placed.lastRanking.diagnosis], top: placed.lastRanking.top, sampled };
    return { kind: 'selected', destinations: this.withAlternates(placed, ordered, req, run.ctx), claimRetries: run.stats.retries, explain };
  }

  /** Best effort: the original error is the one the caller needs; a release failure is attached to it. */
  private async undoAfterError(req: SelectDestinationsRequest, err: unknown): Promise<void> {
    try {
      await this.undo(req);
    } catch (releaseErr) {
      if (err instanceof Error) (err as Error & { releaseError?: unknown }).releaseError = releaseErr;
    }
  }

  /**
   * Step 6: give each instance alternates in its chosen host's cell, from a ranking with every claim
   * applied. NOTE: claims only change the chosen hosts, which alternates exclude, so without a group
   * the last instance's ranking is that ranking (as in Nova); a group's policy changes with each
   * claim, so it is ranked once more.
   */
  private withAlternates(
    placed: { placements: readonly Placement[]; lastRanking: Ranking },
    hosts: readonly HostState[],
    req: SelectDestinationsRequest,
    ctx: SchedulingContext,
  ): Selection[][] {
    const { placements } = placed;
    const chosen = new Set(placements.map((p) => p.host.record.uuid));
    let ranked: readonly HostState[] = [];
    if (req.numAlternates > 0)
      ranked = ctx.group === undefined ? placed.lastRanking.weighed : rankHosts(hosts, this.pipeline, ctx, undefined).weighed;
    return placements.map((p) => [
      toSelection(p.host, p.candidate, req.allocationRequestVersion),
      ...alternatesFor(p.host, ranked, chosen, req.numAlternates).map((a) =>
        toSelection(a.host, a.candidate, req.allocationRequestVersion),
      ),
    ]);
  }
}
