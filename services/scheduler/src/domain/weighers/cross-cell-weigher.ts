import type { HostWeigher } from './types';

/**
 * Nova's CrossCellWeigher: for a move that may leave its cell (requested_destination names the
 * instance's cell with `allow_cross_cell_move`), +1 for a host in that cell and -1 elsewhere, so
 * with the default multiplier (1e6) the move stays home whenever its cell has a host; 0 for every
 * other request (a boot, or a move kept in its cell, where the cell is a restriction, not a preference).
 * A negative multiplier prefers the other cells.
 */
export const crossCellWeigher: HostWeigher = {
  name: 'CrossCellWeigher',
  multiplierOption: 'cross_cell_move_weight_multiplier',
  defaultMultiplier: 1000000.0,
  weigh: (host, ctx) => {
    const d = ctx.spec.requestedDestination;
    if (d === undefined || d.cellUuid === '' || !d.allowCrossCellMove) return 0;
    return host.record.cellUuid === d.cellUuid ? 1 : -1;
  },
};
