/**
 * Loads the allocation-candidates snapshot (every provider with its inventories, usage,
 * traits and aggregates, plus the name tables) from Placement's PostgreSQL schema in one
 * REPEATABLE READ, READ ONLY transaction, so the search sees one consistent state.
 */
import type { Pool, PoolClient } from 'pg';
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

const Q_PROVIDERS = 'SELECT id, uuid::text, parent_provider_id, COALESCE(root_provider_id, id), name, COALESCE(generation, 0) FROM resource_providers';
const Q_INVENTORIES = `
  SELECT i.resource_provider_id, i.resource_class_id, i.total, i.reserved, i.min_unit, i.max_unit,
         i.step_size, i.allocation_ratio, COALESCE(u.used, 0)::int8
    FROM inventories i
    LEFT JOIN (SELECT resource_provider_id, resource_class_id, SUM(used) AS used
                 FROM allocations GROUP BY resource_provider_id, resource_class_id) u
      ON u.resource_provider_id = i.resource_provider_id AND u.resource_class_id = i.resource_class_id`;
// NOTE: trait id order: the order Placement lists a provider's traits in (standard before custom).
const Q_TRAITS = 'SELECT resource_provider_id, trait_id FROM resource_provider_traits ORDER BY resource_provider_id, trait_id';
const Q_AGGS = 'SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates';
const Q_RCS = 'SELECT id, name FROM resource_classes';
const Q_TRAIT_NAMES = 'SELECT id, name FROM traits';
const Q_AGG_UUIDS = 'SELECT id, uuid::text FROM placement_aggregates';

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

function addInventories(nodes: Map<number, MutableNode>, invRows: Row[]): void {
  for (const [rp, rc, total, reserved, minUnit, maxUnit, stepSize, ratio, used] of invRows) {
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

function assemble(results: Row[][]): CandidateSnapshot {
  const [provRows, invRows, traitRows, aggRows, rcRows, traitNameRows, aggUuidRows] = results as [Row[], Row[], Row[], Row[], Row[], Row[], Row[]];
  const nodes = buildNodes(provRows);
  addInventories(nodes, invRows);
  for (const [rp, t] of traitRows) nodes.get(rp as number)?.traits.add(t as number);
  for (const [rp, a] of aggRows) nodes.get(rp as number)?.aggregates.add(a as number);
  const [resourceClassIdByName, resourceClassNameById] = nameMaps(rcRows);
  const [traitIdByName, traitNameById] = nameMaps(traitNameRows);
  const providers = nodes as Map<number, ProviderNode>;
  return {
    providers,
    providerIdByUuid: new Map([...nodes.values()].map((n) => [n.uuid, n.id])),
    resourceClassIdByName,
    resourceClassNameById,
    traitIdByName,
    traitNameById,
    aggregateIdByUuid: new Map(aggUuidRows.map(([id, uuid]) => [uuid as string, id as number])),
    aggregateUuidById: new Map(aggUuidRows.map(([id, uuid]) => [id as number, uuid as string])),
    hasTrees: [...nodes.values()].some((n) => n.parentId !== null),
  };
}

/**
 * A fingerprint of everything the snapshot is built from, computed with integer
 * aggregates only (one scan per table, no row shipped): any committed change to providers,
 * inventories, traits, aggregates, allocations or the name tables changes it, whether or
 * not the writer bumped a provider generation (creation times catch a reset database
 * refilled identically).
 */
const Q_FINGERPRINT = `
  SELECT
   (SELECT row(count(*), sum(generation), sum(id::int8 * coalesce(parent_provider_id, 0)), sum(coalesce(root_provider_id, 0)),
               max(id), max(created_at), max(updated_at)) FROM resource_providers)::text || '|' ||
   (SELECT row(count(*), sum(total), sum(reserved), sum(min_unit + 3 * max_unit::int8 + 7 * step_size), sum(allocation_ratio),
               sum(resource_provider_id::int8 * 1000 + resource_class_id), max(id)) FROM inventories)::text || '|' ||
   (SELECT row(count(*), sum(resource_provider_id::int8 * 100000 + trait_id)) FROM resource_provider_traits)::text || '|' ||
   (SELECT row(count(*), sum(resource_provider_id::int8 * 100000 + aggregate_id)) FROM resource_provider_aggregates)::text || '|' ||
   (SELECT row(count(*), max(id)) FROM placement_aggregates)::text || '|' ||
   (SELECT row(count(*), max(id)) FROM resource_classes)::text || '|' ||
   (SELECT row(count(*), max(id)) FROM traits)::text || '|' ||
   (SELECT row(count(*), sum(id), sum(used), sum(resource_provider_id::int8 * 1000 + resource_class_id)) FROM allocations)::text`;

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

async function loadAll(client: PoolClient): Promise<CandidateSnapshot> {
  const results: Row[][] = [];
  for (const q of [Q_PROVIDERS, Q_INVENTORIES, Q_TRAITS, Q_AGGS, Q_RCS, Q_TRAIT_NAMES, Q_AGG_UUIDS]) results.push(await rows(client, q));
  return assemble(results);
}

/** Reads a consistent snapshot of every provider, uncached. Read-only, retry-safe. */
export async function loadCandidateSnapshot(pool: Pool): Promise<CandidateSnapshot> {
  return inSnapshotTransaction(pool, loadAll);
}

/**
 * Snapshots reused while the database is unchanged: each call checks the fingerprint
 * (one cheap query) and reloads everything, in the same database snapshot, only when it
 * moved. Snapshots are immutable, so concurrent searches share one. Read-only, retry-safe.
 */
export class CandidateSnapshotCache {
  private cached: { fingerprint: string; snapshot: CandidateSnapshot } | null = null;
  /** Loads in progress by fingerprint: concurrent misses on the same state share one load. */
  private readonly loading = new Map<string, Promise<CandidateSnapshot>>();

  constructor(private readonly pool: Pool) {}

  /** The current snapshot (never older than the start of this call). */
  async get(): Promise<CandidateSnapshot> {
    let shared: Promise<CandidateSnapshot> | undefined;
    const own = await inSnapshotTransaction(this.pool, async (client) => {
      const fp = await client.query<{ fp: string }>({ text: `${Q_FINGERPRINT} AS fp` });
      const fingerprint = fp.rows[0]?.fp ?? '';
      const hit = this.cached;
      if (hit && hit.fingerprint === fingerprint) return hit.snapshot;
      // NOTE: an equal fingerprint means equal data, so another request's load serves us.
      shared = this.loading.get(fingerprint);
      if (shared) return undefined;
      const load = loadAll(client);
      this.loading.set(fingerprint, load);
      try {
        const snapshot = await load;
        this.cached = { fingerprint, snapshot };
        return snapshot;
      } finally {
        this.loading.delete(fingerprint);
      }
    });
    return own ?? (await (shared as unknown as Promise<CandidateSnapshot>));
  }
}
