/**
 * Nova's fixed uuid of cell0 (`objects.CellMapping.CELL0_UUID`). Where every cell is (cell0
 * included) is not configuration: it is the API database's `cell_mappings`, which the
 * super-conductor and the scheduler read and follow while they run (`@cellsched/api-db`).
 */
export const CELL0_UUID = '00000000-0000-0000-0000-000000000000';
