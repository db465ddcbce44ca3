/**
 * Omega's scheduler-side copy of shared state, for placement's candidates: an answer to a query
 * is reused for `ttlMs` by the requests of this replica, with this replica's own successful
 * claims charged to its provider summaries. Placement's claim stays the single source of truth:
 * a stale copy costs a refused claim, after which the core asks for a fresh read, which also
 * replaces the copy for everyone.
 */
import type { AllocationCandidate, GetAllocationCandidatesRequest, GetAllocationCandidatesResponse } from '@cellsched/wire';

type Fetch = (q: GetAllocationCandidatesRequest) => Promise<GetAllocationCandidatesResponse>;

interface Entry {
  at: number;
  response: GetAllocationCandidatesResponse;
}

/** Cache counters (observability and tests). */
export interface CandidateCacheStats {
  hits: number;
  fetches: number;
  /** Fetches started in the background while a request was answered from the copy. */
  refreshesAhead: number;
  /** Background refreshes that failed (the copy kept serving until its TTL). */
  refreshErrors: number;
}

/**
 * Reuses candidates answers per query (the seed aside) for `ttlMs` (0: never). Never reuses an
 * answer without candidates (capacity may have come back), never a query restricted to one tree
 * (`in_tree`: a deliberate re-read), never when asked `fresh`. Concurrent misses of one query
 * share one fetch. Answers are shared read-only: callers must copy what they mutate (the core does).
 *
 * Refresh ahead (`refreshAfterMs` < `ttlMs`): a copy older than `refreshAfterMs` still answers,
 * and one background fetch replaces it, so no request waits for placement's query while the
 * copy is younger than `ttlMs`. At most one fetch per query is in flight, whoever started it.
 */
export class CandidateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<GetAllocationCandidatesResponse>>();
  /** Per query, the fresh read queued behind the fetch in flight. */
  private readonly freshNext = new Map<string, Promise<GetAllocationCandidatesResponse>>();
  readonly stats: CandidateCacheStats = { hits: 0, fetches: 0, refreshesAhead: 0, refreshErrors: 0 };

  constructor(
    private readonly fetch: Fetch,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly refreshAfterMs: number = ttlMs,
  ) {}

  async get(query: GetAllocationCandidatesRequest, options: { readonly fresh?: boolean } = {}): Promise<GetAllocationCandidatesResponse> {
    if (this.ttlMs <= 0 || query.groups.some((g) => g.inTree !== '')) return this.count(this.fetch(query));
    const key = JSON.stringify({ ...query, seed: 0 });
    const entry = this.entries.get(key);
    const age = entry === undefined ? Number.POSITIVE_INFINITY : this.now() - entry.at;
    if (options.fresh !== true && entry !== undefined && age < this.ttlMs && entry.response.allocationRequests.length > 0) {
      this.stats.hits += 1;
      if (age >= this.refreshAfterMs && !this.inFlight.has(key)) {
        this.stats.refreshesAhead += 1;
        // NOTE: nobody awaits this fetch; a failure leaves the copy serving until its TTL.
        this.start(key, query).catch(() => {
          this.stats.refreshErrors += 1;
        });
      }
      return entry.response;
    }
    if (options.fresh === true) return this.freshFetch(key, query);
    return this.inFlight.get(key) ?? this.start(key, query);
  }

  /**
   * A read that starts after this call: now when nothing is in flight, else the one fetch queued
   * behind the fetch in flight, shared by every fresh caller that arrives meanwhile. Why: when a
   * cloud fills up, every refused claim asks for a fresh read at once; a herd of identical
   * queries to placement became one in flight plus one queued.
   */
  private freshFetch(key: string, query: GetAllocationCandidatesRequest): Promise<GetAllocationCandidatesResponse> {
    const current = this.inFlight.get(key);
    if (current === undefined) return this.start(key, query);
    let next = this.freshNext.get(key);
    if (next === undefined) {
      next = current
        .catch(() => undefined)
        .then(() => {
          this.freshNext.delete(key);
          return this.start(key, query);
        });
      this.freshNext.set(key, next);
    }
    return next;
  }

  /** One fetch of `query` whose answer replaces the copy; registered as the query's fetch in flight. */
  private start(key: string, query: GetAllocationCandidatesRequest): Promise<GetAllocationCandidatesResponse> {
    const at = this.now();
    const pending: Promise<GetAllocationCandidatesResponse> = this.count(this.fetch(query))
      .then((response) => {
        const current = this.entries.get(key);
        // NOTE: a slower fetch never replaces a copy read after it started (a fresh read, say).
        if (current === undefined || current.at <= at) this.entries.set(key, { at, response });
        return response;
      })
      .finally(() => {
        if (this.inFlight.get(key) === pending) this.inFlight.delete(key);
      });
    this.inFlight.set(key, pending);
    return pending;
  }

  /** Charges a successful claim of this replica to every cached summary of its providers. */
  consume(candidate: AllocationCandidate): void {
    for (const { response } of this.entries.values()) {
      for (const a of candidate.allocations) {
        const summary = response.providerSummaries[a.resourceProviderUuid];
        if (summary === undefined) continue;
        for (const [rc, amount] of Object.entries(a.resources)) {
          const r = summary.resources[rc];
          if (r !== undefined) r.used += amount;
        }
      }
    }
  }

  /** Drops every answer (tests that rebuild the cloud under a running replica). */
  clear(): void {
    this.entries.clear();
  }

  /** Drops expired answers (called now and then so the map does not grow with query shapes). */
  sweep(): void {
    const now = this.now();
    for (const [key, e] of this.entries) if (now - e.at >= this.ttlMs) this.entries.delete(key);
  }

  private count<T>(p: Promise<T>): Promise<T> {
    this.stats.fetches += 1;
    return p;
  }
}
