import {
  countInstanceMappingsInCell,
  deleteCellMapping,
  deleteHostMapping,
  findCellMappingByUrls,
  getCellMapping,
  getHostMapping,
  listHostMappings,
  updateCellMapping,
  type CellMapping,
} from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import { listInstances, unmarkComputeNodesMapped } from '@cellsched/cell-db';
import { flag, option, UsageError } from '../args';
import type { Command, CommandContext } from './types';

async function findCell(ctx: CommandContext, uuid: string | undefined): Promise<CellMapping | undefined> {
  if (uuid === undefined) throw new UsageError('argument --cell_uuid is required');
  const cell = await getCellMapping(ctx.apiDb(), uuid);
  if (cell === undefined) ctx.io.err(`Cell with uuid ${uuid} was not found.`);
  return cell;
}

export const deleteCell: Command = {
  usage: 'cell_v2 delete_cell --cell_uuid UUID [--force]',
  help: 'Delete an empty cell. Exit 1 not found, 2 hosts mapped (without --force), 3 instances mapped. --force also unmaps its hosts.',
  flags: ['force'],
  options: ['cell_uuid'],
  async run(ctx, args) {
    const cell = await findCell(ctx, option(args, 'cell_uuid'));
    if (cell === undefined) return 1;
    const hosts = await listHostMappings(ctx.apiDb(), { cellUuid: cell.uuid });
    if (hosts.length > 0 && !flag(args, 'force')) {
      ctx.io.err(`There are existing hosts mapped to cell with uuid ${cell.uuid}.`);
      return 2;
    }
    if ((await countInstanceMappingsInCell(ctx.apiDb(), cell.id)) > 0) {
      ctx.io.err(`There are existing instances mapped to cell with uuid ${cell.uuid}.`);
      return 3;
    }
    // NOTE: nodes unmapped first so that a later discover_hosts finds them again (as Nova).
    if (hosts.length > 0) await unmarkComputeNodesMapped(ctx.openDb(cell.databaseConnection));
    for (const h of hosts) await deleteHostMapping(ctx.apiDb(), h.host);
    await deleteCellMapping(ctx.apiDb(), cell.uuid);
    return 0;
  },
};

export const deleteHost: Command = {
  usage: 'cell_v2 delete_host --cell_uuid UUID --host HOST',
  help: 'Unmap a host. Exit 1 cell not found, 2 host not found, 3 host in another cell, 4 instances on the host.',
  options: ['cell_uuid', 'host'],
  async run(ctx, args) {
    const host = option(args, 'host');
    if (host === undefined) throw new UsageError('argument --host is required');
    const cell = await findCell(ctx, option(args, 'cell_uuid'));
    if (cell === undefined) return 1;
    const mapping = await getHostMapping(ctx.apiDb(), host);
    if (mapping === undefined) {
      ctx.io.err(`The host ${host} was not found.`);
      return 2;
    }
    if (mapping.cellUuid !== cell.uuid) {
      ctx.io.err(`The host ${host} was not found in the cell ${cell.uuid}.`);
      return 3;
    }
    const cellDb = ctx.openDb(cell.databaseConnection);
    if ((await listInstances(cellDb, { host, limit: 1 })).length > 0) {
      ctx.io.err(`There are instances on the host ${host}.`);
      return 4;
    }
    await unmarkComputeNodesMapped(cellDb, [host]);
    await deleteHostMapping(ctx.apiDb(), host);
    return 0;
  },
};

function enableDisable(ctx: CommandContext, cell: CellMapping, disable: boolean, enable: boolean): boolean | undefined | number {
  if (disable && enable) {
    ctx.io.err('Cell cannot be disabled and enabled at the same time.');
    return 4;
  }
  if (!disable && !enable) return undefined;
  if (cell.uuid === CELL0_UUID) {
    ctx.io.err('Cell0 cannot be disabled.');
    return 5;
  }
  if (disable === cell.disabled) ctx.io.out(`Cell ${cell.uuid} is already ${disable ? 'disabled' : 'enabled'}`);
  return disable;
}

export const updateCell: Command = {
  usage: 'cell_v2 update_cell --cell_uuid UUID [--name N] [--transport-url URL] [--database_connection URL] [--disable|--enable]',
  help: 'Update a cell. Exit 1 not found, 3 URLs used by another cell, 4 both --disable and --enable, 5 cell0 cannot be disabled.',
  flags: ['disable', 'enable'],
  options: ['cell_uuid', 'name', 'transport_url', 'database_connection'],
  async run(ctx, args) {
    const cell = await findCell(ctx, option(args, 'cell_uuid'));
    if (cell === undefined) return 1;
    const transportUrl = option(args, 'transport_url');
    const databaseConnection = option(args, 'database_connection');
    const other = await findCellMappingByUrls(
      ctx.apiDb(),
      transportUrl ?? cell.transportUrl,
      databaseConnection ?? cell.databaseConnection,
    );
    if (other !== undefined && other.uuid !== cell.uuid) {
      ctx.io.err(
        `The specified transport_url and/or database_connection combination already exists for another cell with uuid ${other.uuid}.`,
      );
      return 3;
    }
    const disabled = enableDisable(ctx, cell, flag(args, 'disable'), flag(args, 'enable'));
    if (typeof disabled === 'number') return disabled;
    await updateCellMapping(ctx.apiDb(), cell.uuid, { name: option(args, 'name'), transportUrl, databaseConnection, disabled });
    return 0;
  },
};
