import { discoverHosts as discover } from '@cellsched/api-db';
import type { CommandContext } from './types';

/** `cell_v2 discover_hosts` over the library's `discoverHosts`, with the CLI's pools. */
export async function discoverHosts(
  ctx: CommandContext,
  opts: { cellUuid?: string; byService: boolean; status: (m: string) => void },
): Promise<string[] | undefined> {
  return discover(ctx.apiDb(), { ...opts, cellDb: (cell) => ctx.openDb(cell.databaseConnection) });
}
