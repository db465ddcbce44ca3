import { randomUUID } from 'node:crypto';
import { ApiDbError, checkUuid, type Queryable } from './db';

/** Metadata key naming an aggregate's availability zone. */
export const AZ_METADATA_KEY = 'availability_zone';

/** Nova's host aggregate. `uuid` is also its placement aggregate uuid. */
export interface Aggregate {
  readonly id: number;
  readonly uuid: string;
  readonly name: string;
  readonly hosts: readonly string[];
  /** e.g. `availability_zone`, `filter_tenant_id`, `filter_tenant_id_2`, `ssd`. */
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  /** Bumped by any change of the aggregate, its hosts or metadata (equal to `createdAt` until then). */
  readonly updatedAt: Date;
  /** `updatedAt` once the aggregate has changed, null before (compared in the database, to the microsecond). */
  readonly changedAt: Date | null;
}

interface Row {
  id: number;
  uuid: string;
  name: string;
  hosts: string[];
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
  changed_at: Date | null;
}
const toAggregate = (r: Row): Aggregate => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  hosts: r.hosts,
  metadata: r.metadata,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  changedAt: r.changed_at,
});
const SELECT = `SELECT a.id, a.uuid, a.name, a.created_at, a.updated_at, nullif(a.updated_at, a.created_at) AS changed_at,
  coalesce((SELECT array_agg(h.host ORDER BY h.host) FROM aggregate_hosts h WHERE h.aggregate_id = a.id), '{}') AS hosts,
  coalesce((SELECT jsonb_object_agg(m.key, m.value) FROM aggregate_metadata m WHERE m.aggregate_id = a.id), '{}'::jsonb) AS metadata
  FROM aggregates a`;

/**
 * Creates an aggregate, optionally in an availability zone. Idempotent per uuid (existing
 * uuid: nothing changes, `created` false). A name used by another aggregate throws
 * `api_db.aggregate.exists` (Nova's AggregateNameExists).
 */
export async function createAggregate(
  db: Queryable,
  a: { uuid?: string; name: string; availabilityZone?: string },
): Promise<{ aggregate: Aggregate; created: boolean }> {
  if (a.name.trim() === '' || a.name.length > 255)
    throw new ApiDbError('api_db.aggregate.invalid', 'aggregate name must be 1-255 characters');
  const uuid = checkUuid(a.uuid ?? randomUUID(), 'aggregate uuid');
  const r = await db.query<{ id: number }>(
    `WITH a AS (INSERT INTO aggregates (uuid, name) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id),
     m AS (INSERT INTO aggregate_metadata (aggregate_id, key, value) SELECT id, $3, $4 FROM a WHERE $4::text IS NOT NULL)
     SELECT id FROM a`,
    [uuid, a.name, AZ_METADATA_KEY, a.availabilityZone ?? null],
  );
  const existing = await getAggregate(db, uuid);
  if (existing === undefined) throw new ApiDbError('api_db.aggregate.exists', `Aggregate ${a.name} already exists.`);
  return { aggregate: existing, created: r.rows.length > 0 };
}

/** The aggregate with its hosts and metadata, or undefined. Read-only. */
export async function getAggregate(db: Queryable, uuid: string): Promise<Aggregate | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE a.uuid = $1`, [checkUuid(uuid, 'aggregate uuid')]);
  return r.rows[0] === undefined ? undefined : toAggregate(r.rows[0]);
}

/** The aggregate of this integer id (Nova's `Aggregate.get_by_id`), or undefined. Read-only. */
export async function getAggregateById(db: Queryable, id: number): Promise<Aggregate | undefined> {
  if (!Number.isSafeInteger(id) || id < 1 || id > 0x7fffffff) return undefined;
  const r = await db.query<Row>(`${SELECT} WHERE a.id = $1`, [id]);
  return r.rows[0] === undefined ? undefined : toAggregate(r.rows[0]);
}

/**
 * Renames an aggregate (Nova's `Aggregate.save`). Returns false if it does not exist; a name
 * another aggregate holds throws `api_db.aggregate.exists`. Idempotent.
 */
export async function renameAggregate(db: Queryable, uuid: string, name: string): Promise<boolean> {
  if (name.trim() === '' || name.length > 255) throw new ApiDbError('api_db.aggregate.invalid', 'aggregate name must be 1-255 characters');
  try {
    const r = await db.query('UPDATE aggregates SET name = $2, updated_at = now() WHERE uuid = $1', [
      checkUuid(uuid, 'aggregate uuid'),
      name,
    ]);
    return (r.rowCount ?? 0) > 0;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new ApiDbError('api_db.aggregate.exists', `Aggregate ${name} already exists.`);
    throw err;
  }
}

/**
 * Holds the lock that serialises aggregate membership and availability zone changes until the
 * caller's transaction ends (Nova checks a host's zones, then writes: two such changes must not
 * interleave). Call inside `withTransaction`.
 */
export async function lockAggregates(db: Queryable): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('cellsched.aggregates'))");
}

/** Every aggregate (optionally only those holding `host`), by id. Read-only. */
export async function listAggregates(db: Queryable, opts: { host?: string } = {}): Promise<Aggregate[]> {
  const r = await db.query<Row>(
    `${SELECT} WHERE $1::text IS NULL OR EXISTS (SELECT 1 FROM aggregate_hosts h WHERE h.aggregate_id = a.id AND h.host = $1) ORDER BY a.id`,
    [opts.host ?? null],
  );
  return r.rows.map(toAggregate);
}

/** Adds a host to an aggregate. Idempotent. Returns false if the aggregate does not exist. */
export async function addAggregateHost(db: Queryable, uuid: string, host: string): Promise<boolean> {
  if (host === '') throw new ApiDbError('api_db.aggregate.invalid', 'host must not be empty');
  const r = await db.query(
    `WITH a AS (UPDATE aggregates SET updated_at = now() WHERE uuid = $1 RETURNING id),
     h AS (INSERT INTO aggregate_hosts (aggregate_id, host) SELECT id, $2 FROM a ON CONFLICT DO NOTHING)
     SELECT id FROM a`,
    [checkUuid(uuid, 'aggregate uuid'), host],
  );
  return r.rows.length > 0;
}

/** Removes a host from an aggregate. Idempotent: returns whether it was a member. */
export async function removeAggregateHost(db: Queryable, uuid: string, host: string): Promise<boolean> {
  const r = await db.query<{ host: string }>(
    `WITH d AS (DELETE FROM aggregate_hosts h USING aggregates a WHERE h.aggregate_id = a.id AND a.uuid = $1 AND h.host = $2 RETURNING a.id),
     u AS (UPDATE aggregates SET updated_at = now() WHERE id IN (SELECT id FROM d))
     SELECT id FROM d`,
    [checkUuid(uuid, 'aggregate uuid'), host],
  );
  return r.rows.length > 0;
}

/**
 * Sets metadata keys; a `null` value removes the key (Nova's set_metadata). Idempotent.
 * Returns false if the aggregate does not exist.
 */
export async function setAggregateMetadata(
  db: Queryable,
  uuid: string,
  updates: Readonly<Record<string, string | null>>,
): Promise<boolean> {
  const set = Object.entries(updates).filter((e): e is [string, string] => e[1] !== null);
  const unset = Object.entries(updates)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  if (Object.keys(updates).some((k) => k === '' || k.length > 255))
    throw new ApiDbError('api_db.aggregate.invalid', 'metadata keys must be 1-255 characters');
  const r = await db.query(
    `WITH a AS (UPDATE aggregates SET updated_at = now() WHERE uuid = $1 RETURNING id),
     d AS (DELETE FROM aggregate_metadata m USING a WHERE m.aggregate_id = a.id AND m.key = ANY($4::text[])),
     i AS (INSERT INTO aggregate_metadata (aggregate_id, key, value) SELECT a.id, k, v FROM a, unnest($2::text[], $3::text[]) AS e(k, v)
       ON CONFLICT (aggregate_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now())
     SELECT id FROM a`,
    [checkUuid(uuid, 'aggregate uuid'), set.map(([k]) => k), set.map(([, v]) => v), unset],
  );
  return r.rows.length > 0;
}

/** Deletes an aggregate with its hosts and metadata. Idempotent: returns whether it existed. */
export async function deleteAggregate(db: Queryable, uuid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM aggregates WHERE uuid = $1', [checkUuid(uuid, 'aggregate uuid')]);
  return (r.rowCount ?? 0) > 0;
}
