import { toBuildRequest, type BuildRequest, type BuildRequestRow } from './build-requests';
import { CELL_COLUMNS, toCellMapping, type CellMapping } from './cell-mappings';
import { ApiDbError, checkUuid, checkUuids, type Queryable } from './db';

/** Nova's InstanceMapping: which cell holds an instance (none while it is being scheduled). */
export interface InstanceMapping {
  readonly instanceUuid: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly queuedForDelete: boolean;
  /** Undefined until the super-conductor has put the instance in a cell (or cell0). */
  readonly cell: CellMapping | undefined;
  readonly createdAt: Date;
}

interface Row {
  instance_uuid: string;
  project_id: string;
  user_id: string | null;
  queued_for_delete: boolean;
  created_at: Date;
  id: number | null;
  uuid: string | null;
  name: string | null;
  transport_url: string | null;
  database_connection: string | null;
  disabled: boolean | null;
}

function toInstanceMapping(r: Row): InstanceMapping {
  const cell =
    r.id === null
      ? undefined
      : toCellMapping({
          id: r.id,
          uuid: r.uuid ?? '',
          name: r.name,
          transport_url: r.transport_url ?? '',
          database_connection: r.database_connection ?? '',
          disabled: r.disabled ?? false,
        });
  return {
    instanceUuid: r.instance_uuid,
    projectId: r.project_id,
    userId: r.user_id,
    queuedForDelete: r.queued_for_delete,
    cell,
    createdAt: r.created_at,
  };
}

const SELECT = `SELECT m.instance_uuid, m.project_id, m.user_id, m.queued_for_delete, m.created_at, ${CELL_COLUMNS}
  FROM instance_mappings m LEFT JOIN cell_mappings c ON c.id = m.cell_id`;

export interface NewInstanceMapping {
  instanceUuid: string;
  projectId: string;
  userId?: string | null;
  /** Usually absent: the API creates the mapping without a cell. */
  cellId?: number | null;
}

/**
 * Creates the mapping. Idempotent: returns false (and changes nothing) if the instance
 * already has a mapping.
 */
export async function createInstanceMapping(db: Queryable, m: NewInstanceMapping): Promise<boolean> {
  if (m.projectId === '') throw new ApiDbError('api_db.instance_mapping.invalid', 'project_id must not be empty');
  const r = await db.query(
    `INSERT INTO instance_mappings (instance_uuid, project_id, user_id, cell_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (instance_uuid) DO NOTHING`,
    [checkUuid(m.instanceUuid, 'instance uuid'), m.projectId, m.userId ?? null, m.cellId ?? null],
  );
  return (r.rowCount ?? 0) > 0;
}

/** The mapping with its cell, or undefined (Nova's InstanceMappingNotFound). Read-only. */
export async function getInstanceMapping(db: Queryable, instanceUuid: string): Promise<InstanceMapping | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE m.instance_uuid = $1`, [checkUuid(instanceUuid, 'instance uuid')]);
  return r.rows[0] === undefined ? undefined : toInstanceMapping(r.rows[0]);
}

/**
 * Mappings of these instances (unknown uuids are absent), each with its build request if it
 * still has one: what the super-conductor reads before scheduling, in one round trip. Read-only.
 */
export async function getInstanceMappingsWithBuildRequests(
  db: Queryable,
  instanceUuids: readonly string[],
): Promise<{ readonly mapping: InstanceMapping; readonly buildRequest: BuildRequest | undefined }[]> {
  const r = await db.query<
    Row & { br_instance: unknown; br_project_id: string | null; br_created_at: Date | null; br_trace_parent: string | null }
  >(
    `SELECT m.instance_uuid, m.project_id, m.user_id, m.queued_for_delete, m.created_at, ${CELL_COLUMNS},
       b.instance AS br_instance, b.project_id AS br_project_id, b.created_at AS br_created_at, b.trace_parent AS br_trace_parent
     FROM instance_mappings m LEFT JOIN cell_mappings c ON c.id = m.cell_id LEFT JOIN build_requests b ON b.instance_uuid = m.instance_uuid
     WHERE m.instance_uuid = ANY($1::uuid[]) ORDER BY m.id`,
    [checkUuids(instanceUuids, 'instance uuid')],
  );
  return r.rows.map((x) => ({
    mapping: toInstanceMapping(x),
    buildRequest:
      x.br_project_id === null
        ? undefined
        : toBuildRequest({
            instance_uuid: x.instance_uuid,
            project_id: x.br_project_id,
            instance: x.br_instance,
            created_at: x.br_created_at as Date,
            trace_parent: x.br_trace_parent,
          } satisfies BuildRequestRow),
  }));
}

/** Mappings of these instances (unknown uuids are absent). Read-only. */
export async function getInstanceMappings(db: Queryable, instanceUuids: readonly string[]): Promise<InstanceMapping[]> {
  const r = await db.query<Row>(`${SELECT} WHERE m.instance_uuid = ANY($1::uuid[]) ORDER BY m.id`, [
    checkUuids(instanceUuids, 'instance uuid'),
  ]);
  return r.rows.map(toInstanceMapping);
}

/**
 * Mappings of a project (or of every project), oldest first, not queued for delete unless
 * asked. Read-only.
 */
export async function listInstanceMappings(
  db: Queryable,
  opts: { projectId?: string; includeQueuedForDelete?: boolean; limit?: number } = {},
): Promise<InstanceMapping[]> {
  const r = await db.query<Row>(
    `${SELECT} WHERE ($1::text IS NULL OR m.project_id = $1) AND ($2 OR NOT m.queued_for_delete) ORDER BY m.id LIMIT $3`,
    [opts.projectId ?? null, opts.includeQueuedForDelete ?? false, opts.limit ?? null],
  );
  return r.rows.map(toInstanceMapping);
}

/**
 * Points the mapping at a cell (Nova's `instance_mapping.cell_mapping = cell; save()`).
 * Idempotent (setting the same cell again is a no-op success). Returns false if there is
 * no mapping (the server was deleted meanwhile).
 */
export async function setInstanceMappingCell(db: Queryable, instanceUuid: string, cellId: number): Promise<boolean> {
  const r = await db.query('UPDATE instance_mappings SET cell_id = $2, updated_at = now() WHERE instance_uuid = $1', [
    checkUuid(instanceUuid, 'instance uuid'),
    cellId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** Sets `queued_for_delete`. Idempotent. Returns false if there is no mapping. */
export async function setInstanceMappingQueuedForDelete(db: Queryable, instanceUuid: string, queued: boolean): Promise<boolean> {
  const r = await db.query('UPDATE instance_mappings SET queued_for_delete = $2, updated_at = now() WHERE instance_uuid = $1', [
    checkUuid(instanceUuid, 'instance uuid'),
    queued,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** Deletes the mapping. Idempotent: returns whether it existed. */
export async function deleteInstanceMapping(db: Queryable, instanceUuid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM instance_mappings WHERE instance_uuid = $1', [checkUuid(instanceUuid, 'instance uuid')]);
  return (r.rowCount ?? 0) > 0;
}

/** How many instances are mapped to a cell (Nova's delete_cell refuses a cell that has any). Read-only. */
export async function countInstanceMappingsInCell(db: Queryable, cellId: number): Promise<number> {
  const r = await db.query<{ n: string }>('SELECT count(*) AS n FROM instance_mappings WHERE cell_id = $1', [cellId]);
  return Number(r.rows[0]?.n ?? 0);
}
