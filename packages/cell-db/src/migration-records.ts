import { randomUUID } from 'node:crypto';
import { CellDbError, checkUuid, checkUuids, type Queryable } from './db';

/** Nova's migration types. */
export type MigrationType = 'migration' | 'resize' | 'live-migration' | 'evacuation';

/** Nova's Migration record (a move operation's consumer in placement holds the source allocation). */
export interface MigrationRecord {
  /** The row id (unique within its cell only, as Nova's). */
  readonly id: number;
  readonly uuid: string;
  readonly instanceUuid: string;
  readonly sourceCompute: string | null;
  readonly destCompute: string | null;
  readonly sourceNode: string | null;
  readonly destNode: string | null;
  /** The destination's address (Nova's `dest_host`); null until the destination sets it. */
  readonly destHost: string | null;
  readonly migrationType: MigrationType;
  readonly status: string;
  readonly userId: string | null;
  readonly projectId: string | null;
  /** Nova's old_instance_type_id: the integer id (API DB flavors.id) of the flavor before the move; null if not recorded. */
  readonly oldInstanceTypeId: number | null;
  /** Nova's new_instance_type_id: a resize's new flavor, else the same as old; null if not recorded (evacuations). */
  readonly newInstanceTypeId: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface Row {
  id: string;
  uuid: string;
  instance_uuid: string;
  source_compute: string | null;
  dest_compute: string | null;
  source_node: string | null;
  dest_node: string | null;
  dest_host: string | null;
  migration_type: MigrationType;
  status: string;
  user_id: string | null;
  project_id: string | null;
  old_instance_type_id: number | null;
  new_instance_type_id: number | null;
  created_at: Date;
  updated_at: Date;
}
const COLUMNS = `id, uuid, instance_uuid, source_compute, dest_compute, source_node, dest_node, dest_host, migration_type, status, user_id, project_id,
  old_instance_type_id, new_instance_type_id, created_at, updated_at`;
/** {@link COLUMNS} of the migrations table aliased `m` (queries that join instances). */
const M_COLUMNS = COLUMNS.split(/,\s*/)
  .map((c) => `m.${c}`)
  .join(', ');
const toMigration = (r: Row): MigrationRecord => ({
  id: Number(r.id),
  uuid: r.uuid,
  instanceUuid: r.instance_uuid,
  sourceCompute: r.source_compute,
  destCompute: r.dest_compute,
  sourceNode: r.source_node,
  destNode: r.dest_node,
  destHost: r.dest_host,
  migrationType: r.migration_type,
  status: r.status,
  userId: r.user_id,
  projectId: r.project_id,
  oldInstanceTypeId: r.old_instance_type_id,
  newInstanceTypeId: r.new_instance_type_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface NewMigration {
  uuid?: string;
  instanceUuid: string;
  migrationType: MigrationType;
  status: string;
  sourceCompute?: string | null;
  sourceNode?: string | null;
  destCompute?: string | null;
  destNode?: string | null;
  userId?: string | null;
  projectId?: string | null;
  /** Nova's old/new_instance_type_id (see {@link MigrationRecord}). */
  oldInstanceTypeId?: number | null;
  newInstanceTypeId?: number | null;
}

/** Creates a migration record. Idempotent per uuid (`created` false on repeat, the row unchanged). */
export async function createMigration(db: Queryable, m: NewMigration): Promise<{ migration: MigrationRecord; created: boolean }> {
  if (m.status === '') throw new CellDbError('cell_db.migration.invalid', 'status must not be empty');
  const uuid = checkUuid(m.uuid ?? randomUUID(), 'migration uuid');
  const r = await db.query(
    `INSERT INTO migrations (uuid, instance_uuid, migration_type, status, source_compute, source_node, dest_compute, dest_node, user_id, project_id,
       old_instance_type_id, new_instance_type_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (uuid) DO NOTHING`,
    [
      uuid,
      checkUuid(m.instanceUuid, 'instance uuid'),
      m.migrationType,
      m.status,
      m.sourceCompute ?? null,
      m.sourceNode ?? null,
      m.destCompute ?? null,
      m.destNode ?? null,
      m.userId ?? null,
      m.projectId ?? null,
      m.oldInstanceTypeId ?? null,
      m.newInstanceTypeId ?? null,
    ],
  );
  const migration = await getMigration(db, uuid);
  if (migration === undefined) throw new CellDbError('cell_db.migration.race', `migration ${uuid} vanished during create`);
  return { migration, created: (r.rowCount ?? 0) > 0 };
}

/** The migration, or undefined. Read-only. */
export async function getMigration(db: Queryable, uuid: string): Promise<MigrationRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM migrations WHERE uuid = $1 AND deleted_at IS NULL`, [
    checkUuid(uuid, 'migration uuid'),
  ]);
  return r.rows[0] === undefined ? undefined : toMigration(r.rows[0]);
}

/**
 * Sets the status, optionally only from one of `expectedStatus` (a guard like the instance's).
 * Returns the updated row, or undefined if missing or the guard failed. Idempotent for equal values.
 */
export async function updateMigrationStatus(
  db: Queryable,
  uuid: string,
  status: string,
  expectedStatus?: readonly string[],
): Promise<MigrationRecord | undefined> {
  const r = await db.query<Row>(
    `UPDATE migrations SET status = $2, updated_at = now() WHERE uuid = $1 AND deleted_at IS NULL AND ($3::text[] IS NULL OR status = ANY($3))
     RETURNING ${COLUMNS}`,
    [checkUuid(uuid, 'migration uuid'), status, expectedStatus ?? null],
  );
  return r.rows[0] === undefined ? undefined : toMigration(r.rows[0]);
}

/** Migrations of an instance, oldest first. Read-only. */
export async function listMigrations(db: Queryable, instanceUuid: string): Promise<MigrationRecord[]> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM migrations WHERE instance_uuid = $1 AND deleted_at IS NULL ORDER BY id`, [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows.map(toMigration);
}

/**
 * Live migrations whose own uuid (a move's placement consumer) is one of `uuids`, or whose
 * instance is one of `instanceUuids`; oldest first. Read-only. Bad uuids throw `cell_db.invalid_uuid`.
 */
export async function findMigrations(
  db: Queryable,
  o: { uuids?: readonly string[]; instanceUuids?: readonly string[] },
): Promise<MigrationRecord[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM migrations WHERE deleted_at IS NULL AND (uuid = ANY($1::uuid[]) OR instance_uuid = ANY($2::uuid[])) ORDER BY id`,
    [checkUuids(o.uuids ?? [], 'migration uuid'), checkUuids(o.instanceUuids ?? [], 'instance uuid')],
  );
  return r.rows.map(toMigration);
}

/**
 * Migration statuses that are over: Nova's final ones (`get_in_progress_by_host_and_node` excludes
 * them) but for `done`, an evacuation whose source still holds its allocation and maybe its guest
 * until the source compute is heard from again (then `completed`).
 */
export const MIGRATION_FINAL_STATUSES: readonly string[] = Object.freeze([
  'confirmed',
  'reverted',
  'error',
  'failed',
  'completed',
  'cancelled',
]);

/** What a move step changes on its migration; `undefined` leaves a field as it is. */
export interface MigrationChanges {
  readonly status?: string;
  readonly destCompute?: string | null;
  readonly destNode?: string | null;
}

/**
 * Updates the migration if its status is one of `expectedStatus` (when given): the row after, or
 * undefined (missing, or the guard failed: a repeat or a race, nothing written).
 */
export async function updateMigration(
  db: Queryable,
  uuid: string,
  changes: MigrationChanges,
  expectedStatus?: readonly string[],
): Promise<MigrationRecord | undefined> {
  if (changes.status === '') throw new CellDbError('cell_db.migration.invalid', 'status must not be empty');
  const r = await db.query<Row>(
    `UPDATE migrations SET status = coalesce($2, status), dest_compute = CASE WHEN $4 THEN $3 ELSE dest_compute END,
       dest_node = CASE WHEN $6 THEN $5 ELSE dest_node END, updated_at = now()
     WHERE uuid = $1 AND deleted_at IS NULL AND ($7::text[] IS NULL OR status = ANY($7)) RETURNING ${COLUMNS}`,
    [
      checkUuid(uuid, 'migration uuid'),
      changes.status ?? null,
      changes.destCompute ?? null,
      changes.destCompute !== undefined,
      changes.destNode ?? null,
      changes.destNode !== undefined,
      expectedStatus ?? null,
    ],
  );
  return r.rows[0] === undefined ? undefined : toMigration(r.rows[0]);
}

/** Evacuations `done` whose source is one of these hosts (it is heard from again: its copy must go). Read-only. */
export async function listEvacuationsAwaitingSource(db: Queryable, hosts: readonly string[]): Promise<MigrationRecord[]> {
  if (hosts.length === 0) return [];
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM migrations WHERE deleted_at IS NULL AND migration_type = 'evacuation' AND status = 'done' AND source_compute = ANY($1::text[])
     ORDER BY id`,
    [[...hosts]],
  );
  return r.rows.map(toMigration);
}

/**
 * Cold migrations and resizes `finished` (the instance in VERIFY_RESIZE) for longer than `windowMs`
 * whose instance is live and `resized` with no task in progress (Nova's `_poll_unconfirmed_resizes`).
 * Oldest first. Read-only.
 */
export async function listUnconfirmedResizes(
  db: Queryable,
  o: { readonly windowMs: number; readonly limit?: number },
): Promise<MigrationRecord[]> {
  const r = await db.query<Row>(
    `SELECT ${M_COLUMNS} FROM migrations m JOIN instances i ON i.uuid = m.instance_uuid
     WHERE m.deleted_at IS NULL AND m.status = 'finished' AND m.migration_type IN ('migration', 'resize')
       AND m.updated_at < now() - $1 * interval '1 millisecond'
       AND i.deleted_at IS NULL AND i.vm_state = 'resized' AND i.task_state IS NULL
       AND NOT EXISTS (SELECT 1 FROM instance_tasks t WHERE t.instance_uuid = i.uuid)
     ORDER BY m.updated_at LIMIT $2`,
    [o.windowMs, o.limit ?? 100],
  );
  return r.rows.map(toMigration);
}

/**
 * Migrations not over (see {@link MIGRATION_FINAL_STATUSES}; `done` included) whose instance is
 * deleted or gone: their placement consumer must be released and the migration ended. Read-only.
 */
export async function listMigrationsOfDeletedInstances(db: Queryable, o: { readonly limit?: number } = {}): Promise<MigrationRecord[]> {
  const r = await db.query<Row>(
    `SELECT ${M_COLUMNS} FROM migrations m LEFT JOIN instances i ON i.uuid = m.instance_uuid
     WHERE m.deleted_at IS NULL AND NOT (m.status = ANY($1::text[])) AND (i.uuid IS NULL OR i.deleted_at IS NOT NULL)
     ORDER BY m.id LIMIT $2`,
    [[...MIGRATION_FINAL_STATUSES], o.limit ?? 100],
  );
  return r.rows.map(toMigration);
}

/** Filters of {@link listMigrationsByFilters} (Nova's `migration_get_all_by_filters`); each absent one matches all. */
export interface MigrationFilters {
  readonly statuses?: readonly string[];
  /** Source or destination compute host. */
  readonly host?: string;
  /** Only when `host` is not given (as Nova's `elif`). */
  readonly sourceCompute?: string;
  readonly migrationType?: string;
  readonly instanceUuid?: string;
  readonly userId?: string;
  readonly projectId?: string;
  /** updated_at >= changesSince. */
  readonly changesSince?: Date;
  /** updated_at <= changesBefore. */
  readonly changesBefore?: Date;
  /** Only rows strictly after this one in the order created_at desc, id desc, uuid desc (a page marker). */
  readonly after?: { readonly createdAt: Date; readonly id: number; readonly uuid: string };
  readonly limit?: number;
}

/**
 * Migrations matching every filter, newest first (created_at desc, id desc, uuid desc: a total
 * order, so pages of several cells merge). Read-only. A malformed `instanceUuid` matches nothing
 * (Nova compares it as text).
 */
export async function listMigrationsByFilters(db: Queryable, f: MigrationFilters = {}): Promise<MigrationRecord[]> {
  if (f.limit !== undefined && (!Number.isSafeInteger(f.limit) || f.limit < 0))
    throw new CellDbError('cell_db.migration.invalid', 'limit must be a non-negative integer');
  const host = f.host ?? null;
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM migrations
     WHERE deleted_at IS NULL AND ($1::text[] IS NULL OR status = ANY($1)) AND ($2::text IS NULL OR source_compute = $2 OR dest_compute = $2)
       AND ($3::text IS NULL OR source_compute = $3) AND ($4::text IS NULL OR migration_type = $4) AND ($5::text IS NULL OR instance_uuid::text = $5)
       AND ($6::text IS NULL OR user_id = $6) AND ($7::text IS NULL OR project_id = $7)
       AND ($8::timestamptz IS NULL OR updated_at >= $8) AND ($9::timestamptz IS NULL OR updated_at <= $9)
       AND ($10::timestamptz IS NULL OR (created_at, id, uuid) < ($10, $11::bigint, $12::uuid))
     ORDER BY created_at DESC, id DESC, uuid DESC LIMIT $13`,
    [
      f.statuses === undefined ? null : [...f.statuses],
      host,
      host === null ? (f.sourceCompute ?? null) : null,
      f.migrationType ?? null,
      f.instanceUuid?.toLowerCase() ?? null,
      f.userId ?? null,
      f.projectId ?? null,
      f.changesSince ?? null,
      f.changesBefore ?? null,
      f.after?.createdAt ?? null,
      f.after?.id ?? null,
      f.after === undefined ? null : checkUuid(f.after.uuid, 'marker uuid'),
      f.limit ?? null,
    ],
  );
  return r.rows.map(toMigration);
}
