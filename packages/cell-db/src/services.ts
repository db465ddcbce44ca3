import { randomUUID } from 'node:crypto';
import { CellDbError, checkUuid, type Queryable } from './db';

/** Nova's Service record: one binary on one host (e.g. `nova-compute` on `host1`). */
export interface ServiceRecord {
  readonly id: number;
  readonly uuid: string;
  readonly host: string;
  readonly binary: string;
  readonly topic: string | null;
  readonly reportCount: number;
  readonly disabled: boolean;
  readonly disabledReason: string | null;
  readonly lastSeenUp: Date | null;
  readonly forcedDown: boolean;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

interface Row {
  id: number;
  uuid: string;
  host: string;
  binary: string;
  topic: string | null;
  report_count: number;
  disabled: boolean;
  disabled_reason: string | null;
  last_seen_up: Date | null;
  forced_down: boolean;
  version: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}
export const SERVICE_COLUMNS = `id, uuid, host, "binary", topic, report_count, disabled, disabled_reason, last_seen_up, forced_down, version,
  created_at, updated_at, deleted_at`;
const toService = (r: Row): ServiceRecord => ({
  id: r.id,
  uuid: r.uuid,
  host: r.host,
  binary: r.binary,
  topic: r.topic,
  reportCount: r.report_count,
  disabled: r.disabled,
  disabledReason: r.disabled_reason,
  lastSeenUp: r.last_seen_up,
  forcedDown: r.forced_down,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/**
 * Registers a service (a compute starting up, through its cell conductor). Idempotent per live
 * (host, binary): an existing live row keeps its id, uuid and disabled flags, gets the new topic,
 * version and compute process (kept when none is given); `created` tells which happened. A
 * deleted row is history: the host coming back is a new service (new id and uuid, as Nova's soft
 * delete). Does not count as a heartbeat.
 */
export async function upsertService(
  db: Queryable,
  s: { host: string; binary: string; topic?: string | null; version?: number; uuid?: string; computeProcess?: string },
): Promise<{ service: ServiceRecord; created: boolean }> {
  if (s.host === '' || s.binary === '') throw new CellDbError('cell_db.service.invalid', 'host and binary must not be empty');
  const r = await db.query<Row & { created: boolean }>(
    `INSERT INTO services AS s (uuid, host, "binary", topic, version, compute_process) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (host, "binary") WHERE deleted_at IS NULL DO UPDATE SET topic = EXCLUDED.topic, version = EXCLUDED.version,
       compute_process = coalesce(EXCLUDED.compute_process, s.compute_process), updated_at = now()
     RETURNING ${SERVICE_COLUMNS}, (xmax = 0) AS created`,
    [checkUuid(s.uuid ?? randomUUID(), 'service uuid'), s.host, s.binary, s.topic ?? null, s.version ?? 0, s.computeProcess ?? null],
  );
  const row = r.rows[0];
  if (row === undefined) throw new CellDbError('cell_db.service.race', 'service upsert returned nothing');
  return { service: toService(row), created: row.created };
}

/**
 * A heartbeat (Nova's servicegroup DB driver `_report_state`): report_count + 1,
 * last_seen_up = now (or `at`). Safe to repeat. Returns false if the service is not registered.
 */
export async function recordServiceHeartbeat(db: Queryable, host: string, binary: string, at?: Date): Promise<boolean> {
  const r = await db.query(
    `UPDATE services SET report_count = report_count + 1, last_seen_up = coalesce($3, now()), updated_at = now()
     WHERE host = $1 AND "binary" = $2 AND deleted_at IS NULL`,
    [host, binary, at ?? null],
  );
  return (r.rowCount ?? 0) > 0;
}

/**
 * Heartbeats for many services of one binary in one statement (a simulated-compute process
 * reporting for hundreds of hosts). Returns the hosts that were not registered.
 */
export async function recordServiceHeartbeats(db: Queryable, hosts: readonly string[], binary: string, at?: Date): Promise<string[]> {
  const r = await db.query<{ host: string }>(
    `UPDATE services SET report_count = report_count + 1, last_seen_up = coalesce($3, now()), updated_at = now()
     WHERE host = ANY($1::text[]) AND "binary" = $2 AND deleted_at IS NULL RETURNING host`,
    [[...hosts], binary, at ?? null],
  );
  const seen = new Set(r.rows.map((row) => row.host));
  return hosts.filter((h) => !seen.has(h));
}

/** Enables/disables a service with a reason (os-services). Idempotent. Returns the row, or undefined if unknown. */
export async function setServiceDisabled(
  db: Queryable,
  id: number,
  disabled: boolean,
  reason?: string | null,
): Promise<ServiceRecord | undefined> {
  const r = await db.query<Row>(
    `UPDATE services SET disabled = $2, disabled_reason = CASE WHEN $2 THEN $3 ELSE NULL END, updated_at = now()
     WHERE id = $1 AND deleted_at IS NULL RETURNING ${SERVICE_COLUMNS}`,
    [id, disabled, reason ?? null],
  );
  return r.rows[0] === undefined ? undefined : toService(r.rows[0]);
}

/** Sets forced_down (os-services force down). Idempotent. Returns the row, or undefined if unknown. */
export async function setServiceForcedDown(db: Queryable, id: number, forcedDown: boolean): Promise<ServiceRecord | undefined> {
  const r = await db.query<Row>(
    `UPDATE services SET forced_down = $2, updated_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING ${SERVICE_COLUMNS}`,
    [id, forcedDown],
  );
  return r.rows[0] === undefined ? undefined : toService(r.rows[0]);
}

/** The live service for (host, binary), or undefined. Read-only. */
export async function getService(db: Queryable, host: string, binary: string): Promise<ServiceRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${SERVICE_COLUMNS} FROM services WHERE host = $1 AND "binary" = $2 AND deleted_at IS NULL`, [
    host,
    binary,
  ]);
  return r.rows[0] === undefined ? undefined : toService(r.rows[0]);
}

/**
 * The live service with this id or uuid (a deleted one too with `includeDeleted`), or undefined.
 * With `forUpdate`, the row stays locked until the transaction ends. Read-only.
 */
export async function getServiceById(
  db: Queryable,
  id: number | string,
  opts: { includeDeleted?: boolean; forUpdate?: boolean } = {},
): Promise<ServiceRecord | undefined> {
  const where = `${typeof id === 'number' ? 'id = $1' : 'uuid = $1'} AND ($2 OR deleted_at IS NULL)${opts.forUpdate === true ? ' FOR UPDATE' : ''}`;
  const r = await db.query<Row>(`SELECT ${SERVICE_COLUMNS} FROM services WHERE ${where}`, [
    typeof id === 'number' ? id : checkUuid(id, 'service uuid'),
    opts.includeDeleted ?? false,
  ]);
  return r.rows[0] === undefined ? undefined : toService(r.rows[0]);
}

/** Live services, optionally of one binary, one host or any of `hosts`, by host. Read-only. */
export async function listServices(
  db: Queryable,
  opts: { binary?: string; host?: string; hosts?: readonly string[] } = {},
): Promise<ServiceRecord[]> {
  const r = await db.query<Row>(
    `SELECT ${SERVICE_COLUMNS} FROM services WHERE deleted_at IS NULL AND ($1::text IS NULL OR "binary" = $1) AND ($2::text IS NULL OR host = $2)
       AND ($3::text[] IS NULL OR host = ANY($3)) ORDER BY host, "binary"`,
    [opts.binary ?? null, opts.host ?? null, opts.hosts === undefined ? null : [...opts.hosts]],
  );
  return r.rows.map(toService);
}

/** Soft-deletes a service (and its compute nodes, as Nova's service delete). Idempotent: returns whether it was live. */
export async function deleteService(db: Queryable, id: number): Promise<boolean> {
  return (await deleteServices(db, [id])).services.length > 0;
}

/** What {@link deleteServices} deleted. */
export interface DeletedServices {
  /** The services that were live, by id. */
  readonly services: readonly { readonly id: number; readonly host: string }[];
  /** Uuids (= resource providers) of their compute nodes that were live. */
  readonly nodeUuids: readonly string[];
}

/**
 * Soft-deletes these services and their compute nodes in one statement (bumping `updated_at`,
 * so the scheduler's cache drops them at its next refresh). The nodes lose `mapped`: a host that
 * comes back is a new compute for discover_hosts, as Nova's new compute node row is. Idempotent:
 * already deleted rows are left alone and not returned.
 */
export async function deleteServices(db: Queryable, ids: readonly number[]): Promise<DeletedServices> {
  const r = await db.query<{ id: number; host: string; nodes: string[] }>(
    `WITH s AS (UPDATE services SET deleted_at = now(), updated_at = now() WHERE id = ANY($1::int[]) AND deleted_at IS NULL RETURNING id, host),
     c AS (UPDATE compute_nodes SET deleted_at = now(), updated_at = now(), mapped = 0
           WHERE service_id IN (SELECT id FROM s) AND deleted_at IS NULL RETURNING uuid::text, service_id)
     SELECT s.id, s.host, coalesce(array_agg(c.uuid) FILTER (WHERE c.uuid IS NOT NULL), '{}') AS nodes
     FROM s LEFT JOIN c ON c.service_id = s.id GROUP BY s.id, s.host ORDER BY s.id`,
    [[...ids]],
  );
  return { services: r.rows.map((row) => ({ id: row.id, host: row.host })), nodeUuids: r.rows.flatMap((row) => row.nodes) };
}

/** Maps a row selected with {@link SERVICE_COLUMNS} (for joins in other repositories). */
export function toServiceRecord(r: Row): ServiceRecord {
  return toService(r);
}

/**
 * Services changed (registered, heartbeat, disabled, forced down, deleted) after `since`, or
 * every live one when `since` is undefined; with the cursor for the next call. The cursor
 * lags the database clock by `overlapMs` (default 5 s) for the reason explained on
 * `listHostRecordsChangedSince`: rows may repeat (merge by id), none is lost. Read-only.
 */
export async function listServicesChangedSince(
  db: Queryable,
  since: Date | undefined,
  opts: { overlapMs?: number } = {},
): Promise<{ services: ServiceRecord[]; nextSince: Date }> {
  const overlapMs = opts.overlapMs ?? 5000;
  if (!Number.isFinite(overlapMs) || overlapMs < 0) throw new CellDbError('cell_db.invalid', 'overlapMs must be a non-negative number');
  const cursor = await db.query<{ next: Date }>('SELECT greatest($1::timestamptz, now() - make_interval(secs => $2)) AS next', [
    since ?? null,
    overlapMs / 1000,
  ]);
  const r = await db.query<Row>(
    `SELECT ${SERVICE_COLUMNS} FROM services WHERE ($1::timestamptz IS NULL AND deleted_at IS NULL) OR updated_at > $1 ORDER BY id`,
    [since ?? null],
  );
  const next = cursor.rows[0]?.next;
  if (next === undefined) throw new CellDbError('cell_db.race', 'cursor query returned nothing');
  return { services: r.rows.map(toService), nextSince: next };
}
