import type { CellMapping, CellOpener } from '@cellsched/api-db';
import type { Bus } from '@cellsched/bus';
import { CELL0_UUID } from '@cellsched/config';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import type { Pool } from 'pg';
import { cellName, type CellHandle } from './cells';

/** How to open one cell's database pool and bus connection (main.ts: createPool, Bus.connect). */
export interface CellConnectors {
  pool(url: string, name: string): Pool;
  bus(url: string, name: string): Promise<Bus>;
}

/**
 * Opens a cell from its mapping, with the mapping's own URLs (the cell owner's credentials, as
 * Nova's super-conductor uses them): a pool on its database and, but for cell0 (a database
 * only), a connection to its bus with compute and cell-conductor cast clients. Closing ends both.
 */
export function cellOpener(connect: CellConnectors): CellOpener<CellHandle> {
  const buses = new WeakMap<CellHandle, Bus>();
  return {
    async open(m: CellMapping): Promise<CellHandle> {
      const name = cellName(m);
      const bus = m.uuid === CELL0_UUID ? undefined : await connect.bus(m.transportUrl, name);
      const handle: CellHandle = {
        uuid: m.uuid,
        name,
        pool: connect.pool(m.databaseConnection, name),
        compute: bus?.castClient(ComputeServiceService),
        conductor: bus?.castClient(CellConductorServiceService),
      };
      if (bus !== undefined) buses.set(handle, bus);
      return handle;
    },
    async close(handle: CellHandle): Promise<void> {
      await buses.get(handle)?.close();
      await handle.pool.end();
    },
  };
}
