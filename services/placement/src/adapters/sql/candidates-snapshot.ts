/**
 * Loads the allocation-candidates snapshot (every provider with its inventories, usage,
 * traits and aggregates, plus the name tables) from Placement's PostgreSQL schema in one
 * REPEATABLE READ, READ ONLY transaction, so the search sees one consistent state; and
 * keeps it fresh incrementally from the `candidate_changes` log (migration 003).
 */
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { Pool, PoolClient } from 'pg';
import { ProviderMap } from '../../domain/candidates/provider-map';
import { noteDerivedSnapshot } from '../../domain/candidates/snapshot-index';
import type { CandidateSnapshot, InventoryUsage, ProviderNode } from '../../domain/candidates/types';

interface MutableNode {
  id: number;
  uuid: string;
  name: string;
  generation: number;
  parentId: number | null;
  rootId: number;
  traits: Set<number>;
  aggregates: Set<number>;
  inventories: Map<number, InventoryUsage>;
}

// NOTE: every list is ordered, so a partial reload builds exactly what a full one would.
const PROVIDER_COLUMNS =
  'SELECT id, uuid::text, parent_provider_id, COALESCE(root_provider_id, id), name, COALESCE(generation, 0) FROM resource_providers';
const Q_PROVIDERS = `${PROVIDER_COLUMNS} ORDER BY id`;
const inventoriesQuery = (where: string): string => `
  SELECT i.resource_provider_id, i.resource_class_id, i.total, i.reserved, i.min_unit, i.max_unit,
         i.step_size, i.allocation_ratio, COALESCE(u.used, 0)::int8
    FROM inventories i
    LEFT JOIN (SELECT resource_provider_id, resource_class_id, SUM(used) AS used
                 FROM allocations ${where.replace(/\$RP/g, 'resource_provider_id')} GROUP BY resource_provider_id, resource_class_id) u
      ON u.resource_provider_id = i.resource_provider_id AND u.resource_class_id = i.resource_class_id
   ${where.replace(/\$RP/g, 'i.resource_provider_id')}
   ORDER BY i.resource_provider_id, i.resource_class_id`;
const Q_INVENTORIES = inventoriesQuery('');
// NOTE: trait id order: the order Placement lists a provider's traits in (standard before custom).
const Q_TRAITS = 'SELECT resource_provider_id, trait_id FROM resource_provider_traits ORDER BY resource_provider_id, trait_id';
const Q_AGGS = 'SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates ORDER BY resource_provider_id, aggregate_id';
const Q_RCS = 'SELECT id, name FROM resource_classes ORDER BY id';
const Q_TRAIT_NAMES = 'SELECT id, name FROM traits ORDER BY id';
const Q_AGG_UUIDS = 'SELECT id, uuid::text FROM placement_aggregates ORDER BY id';

/**
 * Which transactions a database snapshot does not see: those with an xid >= xmax and
 * those in progress (xip) when it was taken. Any change missing from a snapshot was made
 * by one of them, whatever order the writers committed in (a sequence would not tell).
 * Precise rather than "xid >= xmin": a long transaction elsewhere in the cluster (xids
 * are cluster-wide) holds xmin back, and would make every check re-read everything
 * logged since it began.
 */
const SNAPSHOT_COLUMNS =
  'pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax, ARRAY(SELECT pg_snapshot_xip(s)::text) AS xip';
const Q_SNAPSHOT = `SELECT ${SNAPSHOT_COLUMNS} FROM pg_current_snapshot() s`;

/** Whether every log row a reader at xmin $1 may need is still there (not pruned), as SQL. */
const LOG_OK = 'COALESCE((SELECT pruned_below <= $1::xid8 FROM candidate_changes_horizon), false)';

/** More log rows than this since the cached snapshot: reload everything instead. */
const MAX_LOGGED = 5000;

/**
 * Rows of `query` (columns named c1..cN) as one JSON array of arrays in the order of the
 * full load's queries (c1, then c2 when `byTwo`), or null when none.
 */
function jsonRows(query: string, columns: number, byTwo = true): string {
  const cols = Array.from({ length: columns }, (_, i) => `c${i + 1}`).join(', ');
  return `(SELECT json_agg(json_build_array(${cols}) ORDER BY c1${byTwo ? ', c2' : ''}) FROM (${query}) q)`;
}

const IDS = 'agg.ids';
const REFRESH_PROVIDERS = jsonRows(
  `SELECT id AS c1, uuid::text AS c2, parent_provider_id AS c3, COALESCE(root_provider_id, id) AS c4, name AS c5, COALESCE(generation, 0) AS c6
     FROM resource_providers WHERE id = ANY(${IDS})`,
  6,
  false,
);
const REFRESH_INVENTORIES = jsonRows(
  `SELECT i.resource_provider_id AS c1, i.resource_class_id AS c2, i.total AS c3, i.reserved AS c4, i.min_unit AS c5, i.max_unit AS c6,
          i.step_size AS c7, i.allocation_ratio AS c8, COALESCE(u.used, 0)::int8 AS c9
     FROM inventories i
     LEFT JOIN (SELECT resource_provider_id, resource_class_id, SUM(used) AS used FROM allocations
                 WHERE resource_provider_id = ANY(${IDS}) GROUP BY resource_provider_id, resource_class_id) u
       ON u.resource_provider_id = i.resource_provider_id AND u.resource_class_id = i.resource_class_id
    WHERE i.resource_provider_id = ANY(${IDS})`,
  9,
);
const REFRESH_TRAITS = jsonRows(
  `SELECT resource_provider_id AS c1, trait_id AS c2 FROM resource_provider_traits WHERE resource_provider_id = ANY(${IDS})`,
  2,
);
const REFRESH_AGGS = jsonRows(
  `SELECT resource_provider_id AS c1, aggregate_id AS c2 FROM resource_provider_aggregates WHERE resource_provider_id = ANY(${IDS})`,
  2,
);
const nameRows = (table: string, column: string): string => jsonRows(`SELECT id AS c1, ${column} AS c2 FROM ${table}`, 2, false);

/**
 * The refresh, ONE statement (one database snapshot, no BEGIN, one round trip): what
 * the cached snapshot ($1 xmin, $2 xmax, $3 xip) did not see, and, in the same
 * snapshot, the rows of the providers it names and the name tables if one changed.
 * Index lookups only when nothing changed (ORDER BY + LIMIT keeps the range scan on
 * the xid index whatever the table's statistics).
 */
const Q_REFRESH = {
  name: 'candidates-refresh',
  text: `
  WITH c AS ((SELECT kind, resource_provider_id FROM candidate_changes WHERE xid >= $2::xid8 ORDER BY xid LIMIT ${MAX_LOGGED + 1})
             UNION ALL
             (SELECT kind, resource_provider_id FROM candidate_changes WHERE xid = ANY($3::xid8[]) LIMIT ${MAX_LOGGED + 1})),
       agg AS (SELECT COALESCE(bool_or(kind = 'f'), false) OR count(*) > ${MAX_LOGGED} AS full_reload,
                      COALESCE(bool_or(kind = 'n'), false) AS names,
                      COALESCE(array_agg(DISTINCT resource_provider_id) FILTER (WHERE kind = 'p'), '{}') AS ids FROM c)
  SELECT ${SNAPSHOT_COLUMNS}, ${LOG_OK} AS log_ok, agg.full_reload, agg.names, agg.ids,
         CASE WHEN cardinality(agg.ids) > 0 AND NOT agg.full_reload THEN json_build_array(
           ${REFRESH_PROVIDERS}, ${REFRESH_INVENTORIES}, ${REFRESH_TRAITS}, ${REFRESH_AGGS}) END AS rows,
         CASE WHEN agg.names AND NOT agg.full_reload THEN json_build_array(
           ${nameRows('resource_classes', 'name')}, ${nameRows('traits', 'name')}, ${nameRows('placement_aggregates', 'uuid::text')}) END AS name_rows
    FROM pg_current_snapshot() s, agg`,
};

interface RefreshRow extends Unseen {
  log_ok: boolean;
  full_reload: boolean;
  names: boolean;
  ids: number[];
  rows: (Row[] | null)[] | null;
  name_rows: (Row[] | null)[] | null;
}

/** Deletes log rows below $1 and records the bound, in one statement. */
const Q_PRUNE = `
  WITH del AS (DELETE FROM candidate_changes WHERE xid < $1::xid8 RETURNING 1),
       hz AS (INSERT INTO candidate_changes_horizon (singleton, pruned_below) VALUES (true, $1::xid8)
              ON CONFLICT (singleton) DO UPDATE SET pruned_below = EXCLUDED.pruned_below
              WHERE candidate_changes_horizon.pruned_below < EXCLUDED.pruned_below RETURNING 1)
  SELECT (SELECT count(*) FROM del)::int AS deleted`;

type Row = unknown[];

async function rows(client: PoolClient, text: string): Promise<Row[]> {
  const res = await client.query<Row>({ text, rowMode: 'array' });
  return res.rows;
}

function buildNodes(providerRows: Row[]): Map<number, MutableNode> {
  const nodes = new Map<number, MutableNode>();
  for (const [id, uuid, parent, root, name, generation] of providerRows) {
    nodes.set(id as number, {
      id: id as number,
      uuid: uuid as string,
      name: name as string,
      generation: generation as number,
      parentId: (parent as number | null) ?? null,
      rootId: root as number,
      traits: new Set(),
      aggregates: new Set(),
      inventories: new Map(),
    });
  }
  return nodes;
}

/** Provider rows, inventories (with usage), traits and aggregates -> nodes. */
function assembleNodes([provRows, invRows, traitRows, aggRows]: Row[][]): Map<number, MutableNode> {
  const nodes = buildNodes(provRows as Row[]);
  for (const [rp, rc, total, reserved, minUnit, maxUnit, stepSize, ratio, used] of invRows as Row[]) {
    nodes.get(rp as number)?.inventories.set(rc as number, {
      total: total as number,
      reserved: reserved as number,
      minUnit: minUnit as number,
      maxUnit: maxUnit as number,
      stepSize: stepSize as number,
      allocationRatio: ratio as number,
      used: Number(used),
    });
  }
  for (const [rp, t] of traitRows as Row[]) nodes.get(rp as number)?.traits.add(t as number);
  for (const [rp, a] of aggRows as Row[]) nodes.get(rp as number)?.aggregates.add(a as number);
  return nodes;
}

/** The name tables of a snapshot; shared by successive snapshots while unchanged. */
interface Names {
  readonly resourceClassIdByName: ReadonlyMap<string, number>;
  readonly resourceClassNameById: ReadonlyMap<number, string>;
  readonly traitIdByName: ReadonlyMap<string, number>;
  readonly traitNameById: ReadonlyMap<number, string>;
  readonly aggregateIdByUuid: ReadonlyMap<string, number>;
  readonly aggregateUuidById: ReadonlyMap<number, string>;
}

function nameMaps(list: Row[]): [Map<string, number>, Map<number, string>] {
  const byName = new Map<string, number>();
  const byId = new Map<number, string>();
  for (const [id, name] of list) {
    byName.set(name as string, id as number);
    byId.set(id as number, name as string);
  }
  return [byName, byId];
}

function assembleNames([rcRows, traitNameRows, aggUuidRows]: Row[][]): Names {
  const [resourceClassIdByName, resourceClassNameById] = nameMaps(rcRows as Row[]);
  const [traitIdByName, traitNameById] = nameMaps(traitNameRows as Row[]);
  const [aggregateIdByUuid, aggregateUuidById] = nameMaps(aggUuidRows as Row[]);
  return { resourceClassIdByName, resourceClassNameById, traitIdByName, traitNameById, aggregateIdByUuid, aggregateUuidById };
}

function sameMap<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function sameNames(a: Names, b: Names): boolean {
  return (
    sameMap(a.resourceClassNameById, b.resourceClassNameById) &&
    sameMap(a.traitNameById, b.traitNameById) &&
    sameMap(a.aggregateUuidById, b.aggregateUuidById)
  );
}

function snapshotOf(
  providers: ProviderMap,
  providerIdByUuid: ReadonlyMap<string, number>,
  names: Names,
  treeNodes: number,
): CandidateSnapshot {
  return {
    providers,
    providerIdByUuid,
    resourceClassIdByName: names.resourceClassIdByName,
    resourceClassNameById: names.resourceClassNameById,
    traitIdByName: names.traitIdByName,
    traitNameById: names.traitNameById,
    aggregateIdByUuid: names.aggregateIdByUuid,
    aggregateUuidById: names.aggregateUuidById,
    hasTrees: treeNodes > 0,
    treeNodes,
    memo: {},
  };
}

async function loadNames(client: PoolClient): Promise<Names> {
  const results: Row[][] = [];
  for (const q of [Q_RCS, Q_TRAIT_NAMES, Q_AGG_UUIDS]) results.push(await rows(client, q));
  return assembleNames(results);
}

async function loadAll(client: PoolClient): Promise<CandidateSnapshot> {
  const results: Row[][] = [];
  for (const q of [Q_PROVIDERS, Q_INVENTORIES, Q_TRAITS, Q_AGGS]) results.push(await rows(client, q));
  const nodes = [...assembleNodes(results).values()];
  const names = await loadNames(client);
  return snapshotOf(
    ProviderMap.of(nodes),
    new Map(nodes.map((n) => [n.uuid, n.id])),
    names,
    nodes.filter((n) => n.parentId !== null).length,
  );
}

/**
 * The snapshot `prev` with the providers `ids` replaced by `results` (their rows; absent
 * ones removed). Unchanged nodes (and name tables, when `names` is null or equal) are
 * shared with `prev`. Null when a provider's uuid changed (only a direct SQL writer does
 * that): its children's memoized summaries name it, so reload all.
 */
function applyChanges(prev: CandidateSnapshot, ids: readonly number[], results: Row[][], names: Names | null): CandidateSnapshot | null {
  const fresh = assembleNodes(results);
  const deleted = ids.filter((id) => !fresh.has(id));
  let treeNodes = prev.treeNodes;
  let uuidsChanged = false;
  for (const id of ids) {
    const before = prev.providers.get(id);
    const after = fresh.get(id);
    treeNodes += (after && after.parentId !== null ? 1 : 0) - (before && before.parentId !== null ? 1 : 0);
    if (before && after && before.uuid !== after.uuid) return null;
    if (before?.uuid !== after?.uuid) uuidsChanged = true;
  }
  const providers = (prev.providers as ProviderMap).with([...fresh.values()], deleted);
  let byUuid = prev.providerIdByUuid;
  if (uuidsChanged) {
    const copy = new Map(byUuid);
    for (const id of ids) {
      const before = prev.providers.get(id);
      if (before && copy.get(before.uuid) === id) copy.delete(before.uuid);
    }
    for (const n of fresh.values()) copy.set(n.uuid, n.id);
    byUuid = copy;
  }
  const keptNames = names === null || sameNames(names, prev) ? prev : names;
  const next = snapshotOf(providers, byUuid, keptNames, treeNodes);
  noteDerivedSnapshot(next, prev, ids);
  return next;
}

async function inSnapshotTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Reads a consistent snapshot of every provider, uncached. Read-only, retry-safe. */
export async function loadCandidateSnapshot(pool: Pool): Promise<CandidateSnapshot> {
  return inSnapshotTransaction(pool, loadAll);
}

/** Which transactions a database snapshot did not see (see SNAPSHOT_COLUMNS). */
interface Unseen {
  readonly xmin: string;
  readonly xmax: string;
  readonly xip: string[];
}

/** A snapshot and what its database snapshot did not see. */
interface Cached {
  readonly snapshot: CandidateSnapshot;
  readonly unseen: Unseen;
}

function unseenOf(row: Unseen): Unseen {
  return { xmin: row.xmin, xmax: row.xmax, xip: row.xip };
}

function args(u: Unseen): unknown[] {
  return [u.xmin, u.xmax, u.xip];
}

/** How the last refresh went (tests and benchmarks read it). */
export type RefreshKind = 'full' | 'incremental' | 'unchanged';

export interface CandidateSnapshotCacheOptions {
  /** Log rows older than this (by the xmin seen this long ago) are pruned; default 5 min. */
  readonly pruneAfterMs?: number;
  /** At most one prune per this interval per cache; default 60 s. */
  readonly pruneEveryMs?: number;
}

/**
 * The snapshot kept fresh from the `candidate_changes` log. Each `get()` (concurrent
 * calls share one refresh, and never get a state older than their own start) runs one
 * indexed statement: nothing logged since the cached snapshot's xmin -> the cached
 * snapshot; else, in one REPEATABLE READ transaction, the changed providers are reloaded
 * into a copy-on-write successor (unchanged nodes shared), the name tables when one
 * changed; a truncation, or a log pruned past the cached xmin, reloads everything.
 * Snapshots are immutable, so concurrent searches share one. Read-only but for the
 * periodic prune of the log, retry-safe.
 */
export class CandidateSnapshotCache {
  private cached: Cached | null = null;
  /** The refresh running now, and the one queued behind it for callers that came later. */
  private running: Promise<CandidateSnapshot> | null = null;
  private queued: Promise<CandidateSnapshot> | null = null;
  /** [time, xmin] seen by refreshes, oldest first: prune horizon candidates. */
  private readonly xmins: [number, string][] = [];
  private lastPrune = Date.now();
  private readonly pruneAfterMs: number;
  private readonly pruneEveryMs: number;
  /** What the last refresh did. */
  lastRefresh: RefreshKind | null = null;
  /** Counts of refreshes by kind since creation. */
  readonly refreshes: Record<RefreshKind, number> = { full: 0, incremental: 0, unchanged: 0 };

  constructor(
    private readonly pool: Pool,
    opts: CandidateSnapshotCacheOptions = {},
  ) {
    this.pruneAfterMs = opts.pruneAfterMs ?? 5 * 60_000;
    this.pruneEveryMs = opts.pruneEveryMs ?? 60_000;
  }

  /** The current snapshot (never older than the start of this call). */
  get(): Promise<CandidateSnapshot> {
    // NOTE: a refresh already running may have read its state before this call began:
    // wait for it and share the next one instead.
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    const after = this.running.catch(() => undefined);
    this.queued = after.then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<CandidateSnapshot> {
    const run = this.refresh().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  private note(kind: RefreshKind, cached: Cached): CandidateSnapshot {
    this.cached = cached;
    this.lastRefresh = kind;
    this.refreshes[kind]++;
    const last = this.xmins[this.xmins.length - 1];
    if (!last || Date.now() - last[0] >= 1000) this.xmins.push([Date.now(), cached.unseen.xmin]);
    return cached.snapshot;
  }

  private async refresh(): Promise<CandidateSnapshot> {
    const hit = this.cached;
    if (hit) {
      const res = await this.pool.query<RefreshRow>({ ...Q_REFRESH, values: args(hit.unseen) });
      const c = res.rows[0];
      if (c && c.log_ok && !c.full_reload) {
        const unseen = unseenOf(c);
        if (c.ids.length === 0 && !c.names) {
          // NOTE: no transaction hit did not see has logged a change visible now, so hit
          // equals this statement's state.
          this.note('unchanged', { snapshot: hit.snapshot, unseen });
          this.maybePrune();
          return hit.snapshot;
        }
        // NOTE: the changed providers' rows were parsed in one piece; what arrived meanwhile (claims) goes before applying them.
        await yieldToIo();
        const results = (c.rows ?? [[], [], [], []]).map((r) => r ?? []);
        const names = c.name_rows ? assembleNames(c.name_rows.map((r) => r ?? [])) : null;
        const snapshot = applyChanges(hit.snapshot, c.ids, results, names);
        if (snapshot) {
          this.note('incremental', { snapshot, unseen });
          this.maybePrune();
          return snapshot;
        }
      }
    }
    const next = await inSnapshotTransaction(this.pool, async (client): Promise<Cached> => {
      const unseen = (await client.query<Unseen>(Q_SNAPSHOT)).rows[0] as Unseen;
      return { snapshot: await loadAll(client), unseen: unseenOf(unseen) };
    });
    this.note('full', next);
    this.maybePrune();
    return next.snapshot;
  }

  /** Deletes log rows every cache has had `pruneAfterMs` to read; best effort. */
  private maybePrune(): void {
    const now = Date.now();
    if (now - this.lastPrune < this.pruneEveryMs) return;
    this.lastPrune = now;
    let horizon: string | null = null;
    while (this.xmins.length > 0 && now - (this.xmins[0] as [number, string])[0] >= this.pruneAfterMs)
      horizon = (this.xmins.shift() as [number, string])[1];
    if (horizon === null) return;
    // NOTE: not awaited: a failed prune only leaves rows for the next one.
    this.pool.query(Q_PRUNE, [horizon]).catch(() => undefined);
  }

  /** The xmin of the cached snapshot's database snapshot (tests, diagnostics). */
  get xmin(): string | null {
    return this.cached?.unseen.xmin ?? null;
  }

  /** Prunes the log below the current cached xmin now (tests). */
  async pruneNow(): Promise<void> {
    if (this.cached) await this.pool.query(Q_PRUNE, [this.cached.unseen.xmin]);
  }
}
