import { CELL0_UUID } from '@cellsched/config';
import type { Queryable } from './db';
import { CELL_COLUMNS, toCellMapping, type CellMapping } from './cell-mappings';

/**
 * Every cell mapping as the view `cell_mapping_endpoints` shows it: both URLs without user and
 * password (where the cell's database and bus are, not the owner's credentials), cell0 first,
 * then by name and uuid. For a reader that connects to the cells as its own role (the
 * scheduler). Read-only.
 */
export async function listCellMappingEndpoints(db: Queryable): Promise<CellMapping[]> {
  const r = await db.query<Parameters<typeof toCellMapping>[0]>(
    `SELECT ${CELL_COLUMNS} FROM cell_mapping_endpoints c ORDER BY (c.uuid = $1) DESC, c.name NULLS LAST, c.uuid`,
    [CELL0_UUID],
  );
  return r.rows.map(toCellMapping);
}
