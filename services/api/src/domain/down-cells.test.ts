import { listShowsDownCells } from './down-cells';

const v = (minor: number): { major: number; minor: number } => ({ major: 2, minor });

describe('listShowsDownCells (Nova _is_cell_down_supported)', () => {
  it('only from 2.69', () => {
    expect(listShowsDownCells([], false, v(68))).toBe(false);
    expect(listShowsDownCells([], false, v(69))).toBe(true);
    expect(listShowsDownCells(['all_tenants'], true, v(68))).toBe(false);
  });

  it('all_tenants is the one filter allowed; paging and sorting never', () => {
    expect(listShowsDownCells(['all_tenants'], true, v(69))).toBe(true);
    for (const k of ['limit', 'marker', 'sort_key', 'sort_dir']) expect(listShowsDownCells([k], true, v(69))).toBe(false);
    for (const k of ['name', 'status', 'changes-since', 'changes-before', 'reservation_id', 'tags'])
      expect(listShowsDownCells([k], false, v(69))).toBe(false);
    expect(listShowsDownCells(['all_tenants', 'project_id'], true, v(69))).toBe(false);
  });

  it("an admin's every key is a filter; a member's unknown keys are dropped first", () => {
    expect(listShowsDownCells(['host'], true, v(69))).toBe(false);
    expect(listShowsDownCells(['host', 'project_id'], false, v(69))).toBe(true);
    expect(listShowsDownCells(['limit'], false, v(69))).toBe(false);
  });
});
