import { createCell, discoverHostsCommand, listCells, listHosts, mapCell0 } from './cell-v2';
import { deleteCell, deleteHost, updateCell } from './cell-v2-admin';
import { flavorCreate, flavorList, imageCreate, imageList } from './catalogue';
import { placementAudit } from './placement-audit';
import { placementSyncAggregates } from './placement-sync-aggregates';
import { apiDbSync, apiDbVersion, dbSync, dbVersion } from './sync';
import type { Command } from './types';

/**
 * Every command: `<category> <action>` like nova-manage (`cell_v2 list_cells`), and the
 * catalogue commands as single words like the old nova/glance clients (`flavor-list`).
 */
export const COMMANDS: ReadonlyMap<string, Command> = new Map<string, Command>([
  ['api_db sync', apiDbSync],
  ['api_db version', apiDbVersion],
  ['db sync', dbSync],
  ['db version', dbVersion],
  ['cell_v2 map_cell0', mapCell0],
  ['cell_v2 create_cell', createCell],
  ['cell_v2 list_cells', listCells],
  ['cell_v2 list_hosts', listHosts],
  ['cell_v2 discover_hosts', discoverHostsCommand],
  ['cell_v2 update_cell', updateCell],
  ['cell_v2 delete_cell', deleteCell],
  ['cell_v2 delete_host', deleteHost],
  ['placement audit', placementAudit],
  ['placement sync_aggregates', placementSyncAggregates],
  ['image-create', imageCreate],
  ['image-list', imageList],
  ['flavor-create', flavorCreate],
  ['flavor-list', flavorList],
]);

/** Finds the command named by the leading positionals; returns it with the remaining argv. */
export function findCommand(argv: readonly string[]): { name: string; command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS.get(name);
    if (command !== undefined && argv.length >= words) return { name, command, rest: argv.slice(words) };
  }
  return undefined;
}

/** The usage text listing every command. */
export function usage(): string {
  const lines = [...COMMANDS.values()].map((c) => `  cellsched-manage ${c.usage}\n      ${c.help}`);
  return [
    'usage: cellsched-manage [--api-db-url URL] [--placement-url URL] <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    "The API database URL comes from --api-db-url or env CELLSCHED_API_DB_URL; placement's from --placement-url or env CELLSCHED_PLACEMENT_URL.",
  ].join('\n');
}
