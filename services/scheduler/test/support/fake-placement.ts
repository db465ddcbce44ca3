import type {
  AllocationCandidate,
  GetAllocationCandidatesRequest,
  GetAllocationCandidatesResponse,
  ProviderSummary,
  RequestGroup,
} from '@cellsched/wire';
import type { ClaimConsumer, ClaimOutcome, Claimer } from '../../src/ports';
import { seededPrng, shuffled } from '../../src/domain/prng';

/** One compute node provider of the fake (a root with no children). */
export interface FakeProvider {
  readonly uuid: string;
  readonly inventory: Record<string, number>;
  readonly traits: Set<string>;
  readonly aggregates: Set<string>;
  generation: number;
}

type Resources = Record<string, number>;

/** "in:a,b" or "a" -> the set it stands for. */
function anyOfSet(entry: string): string[] {
  return entry.startsWith('in:') ? entry.slice(3).split(',') : [entry];
}

/**
 * An in-memory placement that keeps placement's promises: capacity is checked atomically at commit
 * and a claim that raced another write on the same provider (generation moved while it was in
 * flight) is refused as a conflict. Claims yield to the event loop between read and commit, so
 * concurrent requests really interleave.
 */
export class FakePlacement implements Claimer {
  readonly providers = new Map<string, FakeProvider>();
  private readonly byConsumer = new Map<string, Map<string, Resources>>();

  /** consumer -> provider -> resources (write through claim, release or setAllocation). */
  get allocations(): ReadonlyMap<string, ReadonlyMap<string, Resources>> {
    return this.byConsumer;
  }
  readonly stats = { claims: 0, conflicts: 0, noCapacity: 0, releaseCalls: 0, queries: 0 };
  /** Provider -> number of conflicts to answer before behaving (tests of the retry loop). */
  readonly forcedConflicts = new Map<string, number>();
  readonly releaseLog: string[][] = [];
  /** Providers where a claim carrying a group is refused as placement's policy check would (another member there). */
  readonly groupRefusals = new Set<string>();
  /** The group uuid each claim carried (undefined: none), in order. */
  readonly claimGroups: (string | undefined)[] = [];

  addProvider(uuid: string, inventory: Resources, traits: string[] = [], aggregates: string[] = []): void {
    this.providers.set(uuid, {
      uuid,
      inventory: { ...inventory },
      traits: new Set(traits),
      aggregates: new Set(aggregates),
      generation: 0,
    });
  }

  /** Provider -> class -> used, kept in step with `allocations` by commit/release/setAllocation. */
  private readonly usage = new Map<string, Map<string, number>>();

  used(rp: string, rc: string): number {
    return this.usage.get(rp)?.get(rc) ?? 0;
  }

  private account(byRp: ReadonlyMap<string, Resources> | undefined, sign: 1 | -1): void {
    for (const [rp, resources] of byRp ?? []) {
      const u = this.usage.get(rp) ?? new Map<string, number>();
      for (const [rc, n] of Object.entries(resources)) u.set(rc, (u.get(rc) ?? 0) + sign * n);
      this.usage.set(rp, u);
    }
  }

  /** Test setup: give a consumer allocations directly (another scheduler's claim), bumping generations. */
  setAllocation(consumer: string, byRp: Record<string, Resources>): void {
    const map = new Map(Object.entries(byRp));
    this.account(this.allocations.get(consumer), -1);
    this.byConsumer.set(consumer, map);
    this.account(map, 1);
    for (const rp of map.keys()) {
      const p = this.providers.get(rp);
      if (p !== undefined) p.generation += 1;
    }
  }

  private groupMatches(p: FakeProvider, g: RequestGroup): boolean {
    return (
      (g.inTree === '' || g.inTree === p.uuid) &&
      g.required.every((t) => anyOfSet(t).some((x) => p.traits.has(x))) &&
      g.forbidden.every((t) => !p.traits.has(t)) &&
      g.memberOf.every((m) => anyOfSet(m).some((a) => p.aggregates.has(a)))
    );
  }

  private matches(p: FakeProvider, q: GetAllocationCandidatesRequest, wanted: Resources): boolean {
    return (
      q.rootRequired.every((t) => p.traits.has(t)) &&
      q.rootForbidden.every((t) => !p.traits.has(t)) &&
      q.groups.every((g) => this.groupMatches(p, g)) &&
      Object.entries(wanted).every(([rc, n]) => (p.inventory[rc] ?? 0) - this.used(p.uuid, rc) >= n)
    );
  }

  summary(p: FakeProvider): ProviderSummary {
    const resources: ProviderSummary['resources'] = {};
    for (const [rc, capacity] of Object.entries(p.inventory)) resources[rc] = { capacity, used: this.used(p.uuid, rc) };
    return {
      uuid: p.uuid,
      name: p.uuid,
      rootProviderUuid: p.uuid,
      parentProviderUuid: '',
      resources,
      traits: [...p.traits],
      generation: p.generation,
      aggregates: [...p.aggregates],
    };
  }

  getAllocationCandidates(q: GetAllocationCandidatesRequest): Promise<GetAllocationCandidatesResponse> {
    this.stats.queries += 1;
    const wanted: Resources = {};
    for (const g of q.groups) for (const [rc, n] of Object.entries(g.resources)) wanted[rc] = (wanted[rc] ?? 0) + n;
    let fits = [...this.providers.values()].filter((p) => this.matches(p, q, wanted));
    if (q.limit > 0) fits = shuffled(fits, seededPrng(q.seed)).slice(0, q.limit);
    const allocationRequests: AllocationCandidate[] = fits.map((p) => ({
      allocations: [{ resourceProviderUuid: p.uuid, resources: { ...wanted } }],
      mappings: Object.fromEntries(q.groups.map((g) => [g.suffix, { providerUuids: [p.uuid] }])),
    }));
    return Promise.resolve({ allocationRequests, providerSummaries: Object.fromEntries(fits.map((p) => [p.uuid, this.summary(p)])) });
  }

  /** Whether the candidate fits once `old` (what the claim replaces, if anything) is given back. */
  private fits(old: ReadonlyMap<string, Resources> | undefined, candidate: AllocationCandidate): boolean {
    return candidate.allocations.every((a) =>
      Object.entries(a.resources).every(([rc, n]) => {
        const cap = this.providers.get(a.resourceProviderUuid)?.inventory[rc] ?? 0;
        return this.used(a.resourceProviderUuid, rc) - (old?.get(a.resourceProviderUuid)?.[rc] ?? 0) + n <= cap;
      }),
    );
  }

  /** Yields to the event loop between read and commit; true when a forced conflict or another write moved a generation meanwhile. */
  private async raced(candidate: AllocationCandidate): Promise<boolean> {
    const rps = candidate.allocations.map((a) => a.resourceProviderUuid);
    const seen = rps.map((rp) => this.providers.get(rp)?.generation ?? -1);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const forced = rps.find((rp) => (this.forcedConflicts.get(rp) ?? 0) > 0);
    if (forced !== undefined) this.forcedConflicts.set(forced, (this.forcedConflicts.get(forced) ?? 0) - 1);
    return forced !== undefined || rps.some((rp, i) => this.providers.get(rp)?.generation !== seen[i]);
  }

  /** The refusal of a claim that replaces `old` (conflict aside), or undefined when it may commit. */
  private refusal(
    consumer: ClaimConsumer,
    candidate: AllocationCandidate,
    old: ReadonlyMap<string, Resources> | undefined,
  ): ClaimOutcome | undefined {
    if (!this.fits(old, candidate)) {
      this.stats.noCapacity += 1;
      return { kind: 'no_capacity', message: 'fake: does not fit', resourceClass: undefined, providerUuid: undefined };
    }
    const rps = candidate.allocations.map((a) => a.resourceProviderUuid);
    if (consumer.group !== undefined && rps.some((rp) => this.groupRefusals.has(rp))) {
      return { kind: 'group_policy', message: 'fake: another member is there', groupUuid: consumer.group.uuid, providerUuid: rps[0] };
    }
    return undefined;
  }

  private conflict(): ClaimOutcome {
    this.stats.conflicts += 1;
    return { kind: 'conflict', message: 'fake: a concurrent write moved a generation' };
  }

  async claim(consumer: ClaimConsumer, candidate: AllocationCandidate, options: { readonly replace: boolean }): Promise<ClaimOutcome> {
    this.stats.claims += 1;
    this.claimGroups.push(consumer.group?.uuid);
    const raced = await this.raced(candidate);
    const old = this.byConsumer.get(consumer.consumerUuid);
    if (raced || (old !== undefined && !options.replace)) return this.conflict();
    const refused = this.refusal(consumer, candidate, old);
    if (refused !== undefined) return refused;
    this.commit(consumer.consumerUuid, candidate, old);
    return { kind: 'claimed', consumerGeneration: 1 };
  }

  /** Move claims made, in order: [instance, migration]. */
  readonly moveClaims: [string, string][] = [];
  /** RevertMove calls, in order: [instance, migration]. */
  readonly reverts: [string, string][] = [];

  /**
   * Placement's ClaimMove: the instance's allocations go to the migration unless it holds some
   * already, then the instance holds the candidate. The source stays counted (under the
   * migration), so only a destination the instance held before (a retry) is given back.
   */
  async claimMove(consumer: ClaimConsumer, candidate: AllocationCandidate, migrationUuid: string): Promise<ClaimOutcome> {
    this.stats.claims += 1;
    this.moveClaims.push([consumer.consumerUuid, migrationUuid]);
    const raced = await this.raced(candidate);
    if (raced) return this.conflict();
    const source = this.byConsumer.get(consumer.consumerUuid);
    const moved = this.byConsumer.has(migrationUuid);
    const refused = this.refusal(consumer, candidate, moved ? source : undefined);
    if (refused !== undefined) return refused;
    if (!moved && source !== undefined) {
      this.byConsumer.set(migrationUuid, source);
      this.byConsumer.delete(consumer.consumerUuid);
    }
    this.commit(consumer.consumerUuid, candidate, moved ? source : undefined);
    return { kind: 'claimed', consumerGeneration: 1 };
  }

  /** Placement's RevertMove: the migration's allocations become the instance's again. Idempotent. */
  revertMove(instanceUuid: string, migrationUuid: string): Promise<void> {
    this.reverts.push([instanceUuid, migrationUuid]);
    const source = this.byConsumer.get(migrationUuid);
    if (source !== undefined) {
      this.setAllocation(instanceUuid, Object.fromEntries(source));
      this.account(source, -1);
      this.byConsumer.delete(migrationUuid);
    }
    return Promise.resolve();
  }

  private commit(consumer: string, candidate: AllocationCandidate, old: Map<string, Resources> | undefined): void {
    const byRp = new Map<string, Resources>(candidate.allocations.map((a) => [a.resourceProviderUuid, { ...a.resources }]));
    for (const rp of new Set([...byRp.keys(), ...(old?.keys() ?? [])])) {
      const p = this.providers.get(rp);
      if (p !== undefined) p.generation += 1;
    }
    this.account(old, -1);
    this.byConsumer.set(consumer, byRp);
    this.account(byRp, 1);
  }

  release(consumerUuids: readonly string[]): Promise<void> {
    this.stats.releaseCalls += 1;
    this.releaseLog.push([...consumerUuids]);
    for (const c of consumerUuids) {
      const old = this.byConsumer.get(c);
      if (old === undefined) continue;
      for (const rp of old.keys()) {
        const p = this.providers.get(rp);
        if (p !== undefined) p.generation += 1;
      }
      this.account(old, -1);
      this.byConsumer.delete(c);
    }
    return Promise.resolve();
  }

  /**
   * Providers whose usage exceeds their inventory (must always be empty). Recomputed from the
   * allocations themselves, not from the index the capacity check uses.
   */
  overCapacity(): string[] {
    const sums = new Map<string, number>();
    for (const byRp of this.byConsumer.values()) {
      for (const [rp, resources] of byRp)
        for (const [rc, n] of Object.entries(resources)) sums.set(`${rp}/${rc}`, (sums.get(`${rp}/${rc}`) ?? 0) + n);
    }
    return [...this.providers.values()]
      .filter((p) => Object.entries(p.inventory).some(([rc, cap]) => (sums.get(`${p.uuid}/${rc}`) ?? 0) > cap))
      .map((p) => p.uuid);
  }
}
