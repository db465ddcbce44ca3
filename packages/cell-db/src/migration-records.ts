import { randomUUID } from 'node:crypto';
import { CellDbError, checkUuid, checkUuids, type Queryable } from './db';

/** Nova's migration types. */
export type MigrationType = 'migration' | 'resize' | 'live-migration' | 'evacuation';

/** Nova's Migration record (a move operation's consumer in placement holds the source allocation). */
export interface MigrationRecord {
  readonly uuid: string;
  readonly instanceUuid: string;
  readonly sourceCompute: string | null;
  readonly destCompute: string | null;
  readonly sourceNode: string | null;
  readonly destNode: string | null;
  readonly migrationType: MigrationType;
  readonly status: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface Row {
  uuid: string; instance_uuid: string; source_compute: string | null; dest_compute: string | null; source_node: string | null;
  dest_node: string | null; migration_type: MigrationType; status: string; created_at: Date; updated_at: Date;
}
const COLUMNS = 'uuid, instance_uuid, source_compute, dest_compute, source_node, dest_node, migration_type, status, created_at, updated_at';
const toMigration = (r: Row): MigrationRecord => ({
  uuid: r.uuid, instanceUuid: r.instance_uuid, sourceCompute: r.source_compute, destCompute: r.dest_compute, sourceNode: r.source_node,
  destNode: r.dest_node, migrationType: r.migration_type, status: r.status, createdAt: r.created_at, updatedAt: r.updated_at,
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
}

/** Creates a migration record. Idempotent per uuid (`created` false on repeat, the row unchanged). */
export async function createMigration(db: Queryable, m: NewMigration): Promise<{ migration: MigrationRecord; created: boolean }> {
  if (m.status === '') throw new CellDbError('cell_db.migration.invalid', 'status must not be empty');
  const uuid = checkUuid(m.uuid ?? randomUUID(), 'migration uuid');
  const r = await db.query(
    `INSERT INTO migrations (uuid, instance_uuid, migration_type, status, source_compute, source_node, dest_compute, dest_node, user_id, project_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (uuid) DO NOTHING`,
    [uuid, checkUuid(m.instanceUuid, 'instance uuid'), m.migrationType, m.status, m.sourceCompute ?? null, m.sourceNode ?? null,
      m.destCompute ?? null, m.destNode ?? null, m.userId ?? null, m.projectId ?? null]);
  const migration = await getMigration(db, uuid);
  if (migration === undefined) throw new CellDbError('cell_db.migration.race', `migration ${uuid} vanished during create`);
  return { migration, created: (r.rowCount ?? 0) > 0 };
}

/** The migration, or undefined. Read-only. */
export async function getMigration(db: Queryable, uuid: string): Promise<MigrationRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM migrations WHERE uuid = $1 AND deleted_at IS NULL`, [checkUuid(uuid, 'migration uuid')]);
  return r.rows[0] === undefined ? undefined : toMigration(r.rows[0]);
}

/**
 * Sets the status, optionally only from one of `expectedStatus` (a guard like the instance's).
 * Returns the updated row, or undefined if missing or the guard failed. Idempotent for equal values.
 */
export async function updateMigrationStatus(db: Queryable, uuid: string, status: string, expectedStatus?: readonly string[]): Promise<MigrationRecord | undefined> {
  const r = await db.query<Row>(
    `UPDATE migrations SET status = $2, updated_at = now() WHERE uuid = $1 AND deleted_at IS NULL AND ($3::text[] IS NULL OR status = ANY($3))
     RETURNING ${COLUMNS}`, [checkUuid(uuid, 'migration uuid'), status, expectedStatus ?? null]);
  return r.rows[0] === undefined ? undefined : toMigration(r.rows[0]);
}

/** Migrations of an instance, oldest first. Read-only. */
export async function listMigrations(db: Queryable, instanceUuid: string): Promise<MigrationRecord[]> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM migrations WHERE instance_uuid = $1 AND deleted_at IS NULL ORDER BY id`,
    [checkUuid(instanceUuid, 'instance uuid')]);
  return r.rows.map(toMigration);
}

/**
 * Live migrations whose own uuid (a move's placement consumer) is one of `uuids`, or whose
 * instance is one of `instanceUuids`; oldest first. Read-only. Bad uuids throw `cell_db.invalid_uuid`.
 */
export async function findMigrations(db: Queryable, o: { uuids?: readonly string[]; instanceUuids?: readonly string[] }): Promise<MigrationRecord[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM migrations WHERE deleted_at IS NULL AND (uuid = ANY($1::uuid[]) OR instance_uuid = ANY($2::uuid[])) ORDER BY id`,
    [checkUuids(o.uuids ?? [], 'migration uuid'), checkUuids(o.instanceUuids ?? [], 'instance uuid')]);
  return r.rows.map(toMigration);
}
