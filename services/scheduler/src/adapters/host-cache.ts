/**
 * The scheduler's copy of the cells' compute-node and service records plus the API DB's host
 * aggregates (Omega's scheduler-side state): read-only, refreshed incrementally by updated_at
 * watermark, never scanned per request.
 */
import {
  type HostRecord,
  listHostChangesSplitSince,
  listHostRecordsChangedSince,
  type Queryable as CellDb,
  type ServiceVersion,
} from '@cellsched/cell-db';
import { type Aggregate, listAggregates, type Queryable as ApiDb } from '@cellsched/api-db';
import type { ComputeNodeRecord, HostAggregate } from '../ports';
import { toDomain, withService } from './host-records';

/** One cell the cache reads: its uuid, a pool on its database, and whether it is disabled (no new builds). */
export interface CellSource {
  readonly uuid: string;
  readonly db: CellDb;
  readonly disabled?: boolean;
  readonly name?: string;
}

/**
 * The cells to read, as they are now (cell_mappings changes on a running system). Called at
 * the start of every refresh. Never throws once it has answered once (a failed re-read
 * answers the cells known before); the first call may throw.
 */
export interface CellSources {
  refresh(): Promise<readonly CellSource[]>;
}

/** Options of {@link HostCache}. */
export interface HostCacheOptions {
  /** A fixed list, or the cells of cell_mappings (added, moved, disabled and deleted cells are followed). */
  readonly cells: readonly CellSource[] | CellSources;
  readonly apiDb: ApiDb;
  /** A lookup older than this triggers an incremental refresh first (ms). */
  readonly refreshMs: number;
  /** A full reload (every node of every cell) at most this often (ms). */
  readonly fullResyncMs: number;
  /**
   * A copy older than this is not answered from: the lookup waits for the refresh (default
   * 3 x refreshMs). Under load the background refresh keeps the copy younger; after an idle
   * spell the copy is as old as the spell, and a service disabled or enabled meanwhile
   * (os-services) must not be decided on from it.
   */
  readonly maxStaleMs?: number;
  /**
   * How far each incremental read looks back before the previous one (late commits: writers
   * stamp their transaction's start time). Every row changed in that window is read again by
   * each refresh, so with heartbeats of every host it is the cache's main cost. Default 2 s.
   */
  readonly overlapMs?: number;
  readonly now?: () => number;
  /** Told about a failed refresh that was answered from the cache (e.g. a cell DB is down). */
  readonly onRefreshError?: (err: unknown) => void;
}

interface CellState {
  source: CellSource;
  since: Date | undefined;
  readonly raw: Map<string, HostRecord>;
  /** Node uuids of `raw` by their service id (a service row read alone is merged into its nodes). */
  readonly byService: Map<number, Set<string>>;
  /** Service id -> version (updated_at in epoch µs, state) of the service rows read alone and merged: the next read skips them unchanged, and takes only the liveness of a heartbeat. */
  readonly serviceVersions: Map<number, ServiceVersion>;
  /** Node id -> row version of the node rows read by incremental reads: the next read lists them, and reads again only those changed since. */
  readonly nodeVersions: Map<number, string>;
}

/** Cache statistics (observability and tests). */
export interface HostCacheStats {
  refreshes: number;
  fullLoads: number;
  refreshErrors: number;
  rowsRead: number;
}

function newCellState(source: CellSource): CellState {
  return { source, since: undefined, raw: new Map(), byService: new Map(), serviceVersions: new Map(), nodeVersions: new Map() };
}

/**
 * Compute-node records of every cell, keyed by compute node (root provider) uuid.
 *
 * `getComputeNodes` costs a map lookup per uuid. When the last refresh is older than
 * `refreshMs`, a lookup starts a background refresh (one in flight at a time) and answers from
 * the cache meanwhile: each cell reads only rows whose node or service `updated_at` moved past its
 * watermark, and the aggregates (a small table) are re-read. Every `fullResyncMs` the cells are
 * reloaded in full, which also drops nodes deleted in a way the cursor could miss. Reads only.
 */
export class HostCache {
  private cells: CellState[];
  private records = new Map<string, ComputeNodeRecord>();
  private aggregates: HostAggregate[] = [];
  private aggregatesByHost = new Map<string, HostAggregate[]>();
  private lastRefresh = Number.NEGATIVE_INFINITY;
  private lastFull = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;
  private aggregatesFingerprint = '';
  /** Node uuids read since the last rebuild. */
  private readonly changed = new Set<string>();
  /** Node uuids whose service row alone was read since the last rebuild (their record is derived, not rebuilt). */
  private readonly serviceChanged = new Set<string>();
  private readonly now: () => number;
  readonly stats: HostCacheStats = { refreshes: 0, fullLoads: 0, refreshErrors: 0, rowsRead: 0 };

  constructor(private readonly opts: HostCacheOptions) {
    this.cells = Array.isArray(opts.cells) ? opts.cells.map(newCellState) : [];
    this.now = opts.now ?? Date.now;
  }

  /** Records for these uuids (unknown ones absent), refreshing first when the cache is stale. */
  async getComputeNodes(uuids: readonly string[]): Promise<ReadonlyMap<string, ComputeNodeRecord>> {
    await this.ensureFresh();
    const out = new Map<string, ComputeNodeRecord>();
    for (const u of uuids) {
      const r = this.records.get(u);
      if (r !== undefined) out.set(u, r);
    }
    return out;
  }

  /** Every host aggregate with its metadata, refreshing first when stale. */
  async getAggregates(): Promise<readonly HostAggregate[]> {
    await this.ensureFresh();
    return this.aggregates;
  }

  /** How many live compute nodes the cache holds. */
  get size(): number {
    return this.records.size;
  }

  /** Refreshes now (incrementally, or in full when `full` or the resync period passed). Concurrent calls share one refresh. */
  refresh(opts: { full?: boolean } = {}): Promise<void> {
    this.inFlight ??= this.doRefresh(opts.full ?? false).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * Once loaded, a stale cache answers at once and refreshes in the background (one refresh in
   * flight): a request never waits for the cells' read, which after every heartbeat round holds
   * every host (10,000 rows) — unless the copy is older than `maxStaleMs` (after an idle spell),
   * then it waits. Before the first load, the caller waits (and sees its error).
   * NOTE: a failed refresh (a cell DB down) keeps answering from the cache, like Nova's
   * scheduler skipping a cell that does not answer. Stale records expire by themselves: their
   * heartbeats age past service_down_time and ComputeFilter then treats those hosts as down.
   */
  private async ensureFresh(): Promise<void> {
    if (this.now() - this.lastRefresh < this.opts.refreshMs) return;
    if (this.lastFull === Number.NEGATIVE_INFINITY) {
      await this.refresh();
      return;
    }
    const tooOld = this.now() - this.lastRefresh >= (this.opts.maxStaleMs ?? 3 * this.opts.refreshMs);
    if (this.inFlight === undefined) {
      this.refresh().catch((err: unknown) => {
        this.lastRefresh = this.now(); // retry after refreshMs, not on every request
        this.stats.refreshErrors += 1;
        this.opts.onRefreshError?.(err);
      });
    }
    // NOTE: a failed refresh still answers from the cache (as above), only later.
    if (tooOld) await this.inFlight?.catch(() => undefined);
  }

  private async doRefresh(forceFull: boolean): Promise<void> {
    const started = this.now();
    const full = forceFull || started - this.lastFull >= this.opts.fullResyncMs;
    const cellsChanged = await this.followCells();
    // NOTE: cells are read independently: one cell down must not freeze what the others report.
    const [aggregates, ...cells] = await Promise.allSettled([
      listAggregates(this.opts.apiDb),
      ...this.cells.map((c) => this.readCell(c, full)),
    ]);
    const aggregatesChanged = aggregates?.status === 'fulfilled' && this.setAggregates(aggregates.value);
    this.rebuild(aggregatesChanged || full || cellsChanged);
    const failed = [aggregates, ...cells].find((r): r is PromiseRejectedResult => r?.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    this.stats.refreshes += 1;
    if (full) {
      this.stats.fullLoads += 1;
      this.lastFull = started;
    }
    this.lastRefresh = started;
  }

  /**
   * Takes the cells as they are now: a new cell (or one whose pool was replaced: its URL
   * changed) starts with a full read, a deleted one leaves with its nodes, a disabled or enabled
   * one keeps its rows. True when the domain records must all be rebuilt.
   */
  private async followCells(): Promise<boolean> {
    if (Array.isArray(this.opts.cells)) return false;
    const sources = await (this.opts.cells as CellSources).refresh();
    const before = new Map(this.cells.map((c) => [c.source.uuid, c]));
    let changed = sources.length !== this.cells.length;
    this.cells = sources.map((source) => {
      const kept = before.get(source.uuid);
      if (kept !== undefined && kept.source.db === source.db) {
        changed ||= (kept.source.disabled ?? false) !== (source.disabled ?? false);
        kept.source = source;
        return kept;
      }
      changed = true;
      return newCellState(source);
    });
    return changed;
  }

  /**
   * A full read takes every live node with its service; an incremental one takes the nodes whose
   * own row changed since it last read them (with their service) and, apart, the service rows that changed, merged into
   * the nodes that name them. NOTE: why apart: a heartbeat round changes every compute's service
   * row and nothing else, and reading those through their nodes (every node column, the service
   * as JSON) cost about three times as much, each round being read about three times (overlap).
   */
  private async readCell(cell: CellState, full: boolean): Promise<void> {
    const overlapMs = this.opts.overlapMs ?? 2000;
    if (full || cell.since === undefined) {
      const changes = await listHostRecordsChangedSince(cell.source.db, undefined, { overlapMs });
      cell.raw.clear();
      cell.byService.clear();
      cell.serviceVersions.clear();
      cell.nodeVersions.clear();
      for (const h of changes.hosts) this.putNode(cell, h);
      this.stats.rowsRead += changes.hosts.length;
      cell.since = changes.nextSince;
      return;
    }
    const changes = await listHostChangesSplitSince(cell.source.db, cell.since, {
      overlapMs,
      known: cell.serviceVersions,
      knownNodes: cell.nodeVersions,
    });
    for (const h of changes.hosts) this.putNode(cell, h);
    for (const service of changes.services) {
      for (const uuid of cell.byService.get(service.id) ?? []) {
        const r = cell.raw.get(uuid);
        if (r === undefined) continue;
        // NOTE: as when read with its node: a deleted service row is no live service.
        cell.raw.set(uuid, { node: r.node, service: service.deletedAt === null ? service : undefined });
        this.serviceChanged.add(uuid);
      }
    }
    // a held service's heartbeat: its liveness only (its state is the one held)
    for (const beat of changes.heartbeats) {
      for (const uuid of cell.byService.get(beat.id) ?? []) {
        const r = cell.raw.get(uuid);
        if (r?.service === undefined) continue;
        cell.raw.set(uuid, { node: r.node, service: { ...r.service, lastSeenUp: beat.lastSeenUp, updatedAt: beat.updatedAt } });
        this.serviceChanged.add(uuid);
      }
    }
    // NOTE: only now that they are merged: a read that failed half-way must not mark rows as held.
    for (const [id, version] of changes.serviceVersions) cell.serviceVersions.set(id, version);
    for (const [id, version] of changes.nodeVersions) cell.nodeVersions.set(id, version);
    this.stats.rowsRead += changes.hosts.length + changes.services.length + changes.heartbeats.length;
    cell.since = changes.nextSince;
  }

  /** Takes one node read with its service (a deleted node leaves), keeping the by-service index. */
  private putNode(cell: CellState, h: HostRecord): void {
    const uuid = h.node.uuid;
    const before = cell.raw.get(uuid)?.node.serviceId ?? null;
    if (before !== null) cell.byService.get(before)?.delete(uuid);
    if (h.node.deletedAt === null) {
      cell.raw.set(uuid, h);
      if (h.node.serviceId !== null) {
        let nodes = cell.byService.get(h.node.serviceId);
        if (nodes === undefined) cell.byService.set(h.node.serviceId, (nodes = new Set()));
        nodes.add(uuid);
      }
    } else {
      cell.raw.delete(uuid);
    }
    this.changed.add(uuid);
  }

  /** Takes the aggregates just read; true when they differ from the cached ones (hosts or metadata). */
  private setAggregates(rows: readonly Aggregate[]): boolean {
    const fingerprint = JSON.stringify(rows.map((a) => [a.uuid, a.name, a.hosts, a.metadata]));
    if (fingerprint === this.aggregatesFingerprint) return false;
    this.aggregatesFingerprint = fingerprint;
    this.aggregates = rows.map((a) => ({ uuid: a.uuid, name: a.name, metadata: { ...a.metadata } }));
    this.aggregatesByHost = new Map();
    rows.forEach((a, i) => {
      for (const h of a.hosts) this.aggregatesByHost.set(h, [...(this.aggregatesByHost.get(h) ?? []), this.aggregates[i] as HostAggregate]);
    });
    return true;
  }

  /** Recomputes domain records: all of them when aggregates changed (or after a full load), else only changed nodes. */
  private rebuild(all: boolean): void {
    const next = all ? new Map<string, ComputeNodeRecord>() : this.records;
    for (const cell of this.cells) {
      if (all) {
        for (const [uuid, r] of cell.raw) next.set(uuid, toDomain(r, cell.source, this.aggregatesByHost.get(r.node.host) ?? []));
        continue;
      }
      for (const uuid of this.changed) {
        const r = cell.raw.get(uuid);
        if (r !== undefined) next.set(uuid, toDomain(r, cell.source, this.aggregatesByHost.get(r.node.host) ?? []));
      }
      for (const uuid of this.serviceChanged) {
        const r = cell.raw.get(uuid);
        if (r === undefined || this.changed.has(uuid)) continue;
        const before = next.get(uuid);
        next.set(
          uuid,
          before === undefined ? toDomain(r, cell.source, this.aggregatesByHost.get(r.node.host) ?? []) : withService(before, r.service),
        );
      }
    }
    if (!all) for (const uuid of this.changed) if (!this.cells.some((c) => c.raw.has(uuid))) next.delete(uuid);
    this.changed.clear();
    this.serviceChanged.clear();
    this.records = next;
  }
}
