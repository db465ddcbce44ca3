/**
 * The scheduler's copy of the API DB's host mappings (which cell each discovered compute host is
 * in), so an undiscovered host is never chosen: Nova's conductor fails a build whose host has no
 * mapping (HostMappingNotFound) after the scheduler chose it; here the host is not a candidate.
 */
import { hostMappingsVersion, listHostMappingsAfter, type HostMappingsVersion, type Queryable as ApiDb } from '@cellsched/api-db';
import type { ComputeNodeRecord } from '../ports';

/** Cache statistics (observability and tests). */
export interface HostMappingCacheStats {
  checks: number;
  fullLoads: number;
  rowsRead: number;
}

/**
 * host → cell uuid, kept up to date by {@link refresh}: each call costs one aggregate over the
 * table (how many mappings, highest id); only when that moved are rows read — the ones added since
 * (ids only grow), or all of them when a mapping went (a delete_host, an os-services DELETE, a
 * count that does not add up). `isMapped` is one map lookup. Reads only.
 */
export class HostMappingCache {
  private byHost = new Map<string, string>();
  private version: HostMappingsVersion | undefined;
  private lastFull = Number.NEGATIVE_INFINITY;
  readonly stats: HostMappingCacheStats = { checks: 0, fullLoads: 0, rowsRead: 0 };

  /** `fullResyncMs`: a full reload at least this often (belt and braces: a mapping changed in place would change neither count nor highest id). */
  constructor(
    private readonly apiDb: ApiDb,
    private readonly fullResyncMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `host` has a host mapping to the cell `cellUuid`. O(1). */
  isMapped(host: string, cellUuid: string): boolean {
    return this.byHost.get(host) === cellUuid;
  }

  /** How many hosts are mapped. */
  get size(): number {
    return this.byHost.size;
  }

  /** Brings the copy up to date (see the class). Throws on a database failure, leaving the copy as it was. Not reentrant: one caller at a time. */
  async refresh(opts: { full?: boolean } = {}): Promise<void> {
    this.stats.checks += 1;
    const v = await hostMappingsVersion(this.apiDb);
    const full = opts.full === true || this.version === undefined || this.now() - this.lastFull >= this.fullResyncMs;
    if (!full && v.count === this.version?.count && v.maxId === this.version.maxId) return;
    if (!full && this.version !== undefined) {
      const added = await listHostMappingsAfter(this.apiDb, this.version.maxId);
      this.stats.rowsRead += added.length;
      // NOTE: no mapping went (the count adds up) and none came after the version was read: take the new ones
      if (this.version.count + added.length === v.count && added.every((m) => m.id <= v.maxId)) {
        for (const m of added) this.byHost.set(m.host, m.cellUuid);
        this.version = v;
        return;
      }
    }
    await this.reload();
  }

  private async reload(): Promise<void> {
    const started = this.now();
    const rows = await listHostMappingsAfter(this.apiDb, 0);
    this.byHost = new Map(rows.map((m) => [m.host, m.cellUuid]));
    // NOTE: the version of what was read (one statement, one snapshot), not of an earlier count
    this.version = { count: rows.length, maxId: rows.reduce((max, m) => Math.max(max, m.id), 0) };
    this.stats.rowsRead += rows.length;
    this.stats.fullLoads += 1;
    this.lastFull = started;
  }
}

/** Looks compute node records up by compute node (root provider) uuid. */
export type NodeLookup = (uuids: readonly string[]) => Promise<ReadonlyMap<string, ComputeNodeRecord>>;

/**
 * The snapshot's `getComputeNodes` without the records of hosts that have no host mapping to
 * their cell: the core then treats them as hosts it has no record of (never chosen, counted in the
 * `host_state_snapshot` line of the diagnosis). One map lookup per record looked up, so a decision
 * pays O(1) per host it looks at, whatever the cloud's size.
 */
export function mappedHostsOnly(lookup: NodeLookup, mappings: Pick<HostMappingCache, 'isMapped'>): NodeLookup {
  return async (uuids) => {
    const found = await lookup(uuids);
    const out = new Map<string, ComputeNodeRecord>();
    for (const [uuid, r] of found) if (mappings.isMapped(r.host, r.cellUuid)) out.set(uuid, r);
    return out;
  };
}
