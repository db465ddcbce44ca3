import { randomUUID } from 'node:crypto';
import { CELL0_UUID } from '@cellsched/config';
import { ApiDbError, checkUuid, type Queryable } from './db';

/** Nova's CellMapping: how to reach one cell's database and bus. */
export interface CellMapping {
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  readonly transportUrl: string;
  readonly databaseConnection: string;
  readonly disabled: boolean;
}

interface Row {
  id: number;
  uuid: string;
  name: string | null;
  transport_url: string;
  database_connection: string;
  disabled: boolean;
}

export const CELL_COLUMNS = 'c.id, c.uuid, c.name, c.transport_url, c.database_connection, c.disabled';

/** Maps a `cell_mappings` row (selected with {@link CELL_COLUMNS}). */
export function toCellMapping(r: Row): CellMapping {
  return {
    id: r.id,
    uuid: r.uuid,
    name: r.name,
    transportUrl: r.transport_url,
    databaseConnection: r.database_connection,
    disabled: r.disabled,
  };
}

export interface NewCellMapping {
  /** Default: a new random uuid (cell0 must pass {@link CELL0_UUID}). */
  uuid?: string;
  name: string | null;
  transportUrl: string;
  databaseConnection: string;
  disabled?: boolean;
}

/**
 * Inserts a cell mapping. Idempotent per uuid: if the uuid exists nothing changes and
 * `created` is false (the existing row is returned). Does **not** check for another cell
 * with the same URLs; see {@link findCellMappingByUrls} (Nova's create_cell refuses that).
 */
export async function createCellMapping(db: Queryable, cell: NewCellMapping): Promise<{ cell: CellMapping; created: boolean }> {
  const uuid = checkUuid(cell.uuid ?? randomUUID(), 'cell uuid');
  if (cell.transportUrl === '' || cell.databaseConnection === '') {
    throw new ApiDbError('api_db.cell_mapping.invalid', 'transport_url and database_connection must not be empty');
  }
  const ins = await db.query<Row>(
    `INSERT INTO cell_mappings AS c (uuid, name, transport_url, database_connection, disabled)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (uuid) DO NOTHING RETURNING ${CELL_COLUMNS}`,
    [uuid, cell.name, cell.transportUrl, cell.databaseConnection, cell.disabled ?? false],
  );
  const row = ins.rows[0];
  if (row !== undefined) return { cell: toCellMapping(row), created: true };
  const existing = await getCellMapping(db, uuid);
  if (existing === undefined) throw new ApiDbError('api_db.cell_mapping.race', `cell mapping ${uuid} vanished during create`);
  return { cell: existing, created: false };
}

/** The cell mapping with this uuid, or undefined. Read-only. */
export async function getCellMapping(db: Queryable, uuid: string): Promise<CellMapping | undefined> {
  const r = await db.query<Row>(`SELECT ${CELL_COLUMNS} FROM cell_mappings c WHERE c.uuid = $1`, [checkUuid(uuid, 'cell uuid')]);
  return r.rows[0] === undefined ? undefined : toCellMapping(r.rows[0]);
}

/** Every cell mapping, cell0 first, then by name and uuid (Nova's list_cells order). Read-only. */
export async function listCellMappings(db: Queryable): Promise<CellMapping[]> {
  const r = await db.query<Row>(`SELECT ${CELL_COLUMNS} FROM cell_mappings c ORDER BY (c.uuid = $1) DESC, c.name NULLS LAST, c.uuid`, [
    CELL0_UUID,
  ]);
  return r.rows.map(toCellMapping);
}

/** The cell already using this transport URL and database connection, if any. Read-only. */
export async function findCellMappingByUrls(
  db: Queryable,
  transportUrl: string,
  databaseConnection: string,
): Promise<CellMapping | undefined> {
  const r = await db.query<Row>(
    `SELECT ${CELL_COLUMNS} FROM cell_mappings c WHERE c.transport_url = $1 AND c.database_connection = $2 ORDER BY c.id LIMIT 1`,
    [transportUrl, databaseConnection],
  );
  return r.rows[0] === undefined ? undefined : toCellMapping(r.rows[0]);
}

/** Enables or disables scheduling to a cell. Idempotent. Returns false if the cell does not exist. */
export async function setCellMappingDisabled(db: Queryable, uuid: string, disabled: boolean): Promise<boolean> {
  const r = await db.query('UPDATE cell_mappings SET disabled = $2, updated_at = now() WHERE uuid = $1', [
    checkUuid(uuid, 'cell uuid'),
    disabled,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** Fields `updateCellMapping` may change; undefined leaves a field as it is. */
export interface CellMappingChanges {
  name?: string | null;
  transportUrl?: string;
  databaseConnection?: string;
  disabled?: boolean;
}

/**
 * Updates a cell mapping (Nova's update_cell). Idempotent. Returns the updated row, or
 * undefined if the cell does not exist. Empty URLs throw `api_db.cell_mapping.invalid`.
 */
export async function updateCellMapping(db: Queryable, uuid: string, c: CellMappingChanges): Promise<CellMapping | undefined> {
  if (c.transportUrl === '' || c.databaseConnection === '')
    throw new ApiDbError('api_db.cell_mapping.invalid', 'transport_url and database_connection must not be empty');
  const r = await db.query<Row>(
    `UPDATE cell_mappings c SET name = CASE WHEN $2 THEN $3 ELSE c.name END, transport_url = coalesce($4, c.transport_url),
       database_connection = coalesce($5, c.database_connection), disabled = coalesce($6, c.disabled), updated_at = now()
     WHERE c.uuid = $1 RETURNING ${CELL_COLUMNS}`,
    [
      checkUuid(uuid, 'cell uuid'),
      c.name !== undefined,
      c.name ?? null,
      c.transportUrl ?? null,
      c.databaseConnection ?? null,
      c.disabled ?? null,
    ],
  );
  return r.rows[0] === undefined ? undefined : toCellMapping(r.rows[0]);
}

/**
 * Deletes a cell mapping that has no host or instance mappings left (the caller checks and
 * removes those first, as Nova's delete_cell). Idempotent: returns whether it existed.
 * A cell still referenced is a foreign-key error (23503) and nothing is deleted.
 */
export async function deleteCellMapping(db: Queryable, uuid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM cell_mappings WHERE uuid = $1', [checkUuid(uuid, 'cell uuid')]);
  return (r.rowCount ?? 0) > 0;
}
