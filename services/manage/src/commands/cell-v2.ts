import { createCellMapping, findCellMappingByUrls, getCellMapping, listCellMappings, listHostMappings } from '@cellsched/api-db';
import { CELL0_UUID } from '@cellsched/config';
import { flag, option } from '../args';
import { maskPassword, renderTable } from '../table';
import { discoverHosts } from './discover-hosts';
import type { Command } from './types';

const DB_SCHEMES = ['postgres:', 'postgresql:'];
const BUS_SCHEMES = ['amqp:', 'amqps:'];

/** A problem with a URL option, or undefined when it is fine. */
function badUrl(what: string, url: string, schemes: readonly string[]): string | undefined {
  if (!URL.canParse(url)) return `${what} is not a URL: ${maskPassword(url)}`;
  const scheme = new URL(url).protocol;
  return schemes.includes(scheme) ? undefined : `${what} must use one of ${schemes.join(', ')}, got ${scheme}`;
}

export const mapCell0: Command = {
  usage: 'cell_v2 map_cell0 --database_connection URL',
  help: "Create cell0's mapping (the database for instances that could not be scheduled). Returns 0 also if it exists.",
  options: ['database_connection'],
  async run(ctx, args) {
    const url = option(args, 'database_connection');
    if (url === undefined) {
      ctx.io.err('Must specify --database_connection (there is no [database]/connection to derive it from).');
      return 1;
    }
    const problem = badUrl('--database_connection', url, DB_SCHEMES);
    if (problem !== undefined) {
      ctx.io.err(problem);
      return 1;
    }
    const { created } = await createCellMapping(ctx.apiDb(), {
      uuid: CELL0_UUID,
      name: 'cell0',
      transportUrl: 'none:///',
      databaseConnection: url,
    });
    if (!created) ctx.io.out('Cell0 is already setup');
    return 0;
  },
};

export const createCell: Command = {
  usage: 'cell_v2 create_cell --name NAME --transport-url URL --database_connection URL [--uuid UUID] [--disabled] [--verbose]',
  help: 'Add a cell mapping. --verbose prints its uuid (as Nova). Exit 2 if a cell with both URLs exists.',
  flags: ['verbose', 'disabled'],
  options: ['name', 'transport_url', 'database_connection', 'uuid'],
  async run(ctx, args) {
    const transportUrl = option(args, 'transport_url');
    const databaseConnection = option(args, 'database_connection');
    if (transportUrl === undefined) {
      ctx.io.err('Must specify --transport-url if [DEFAULT]/transport_url is not set in the configuration file.');
      return 1;
    }
    if (databaseConnection === undefined) {
      ctx.io.err('Must specify --database_connection if [database]/connection is not set in the configuration file.');
      return 1;
    }
    const problems = [
      badUrl('--transport-url', transportUrl, BUS_SCHEMES),
      badUrl('--database_connection', databaseConnection, DB_SCHEMES),
    ].filter((p) => p !== undefined);
    if (problems.length > 0) {
      for (const p of problems) ctx.io.err(p);
      return 1;
    }
    const uuid = option(args, 'uuid');
    if (uuid === CELL0_UUID) {
      ctx.io.err('The cell0 uuid is reserved: use cell_v2 map_cell0.');
      return 1;
    }
    if ((await findCellMappingByUrls(ctx.apiDb(), transportUrl, databaseConnection)) !== undefined) {
      ctx.io.err('Cell with the specified transport_url and database_connection combination already exists');
      return 2;
    }
    if (uuid !== undefined && (await getCellMapping(ctx.apiDb(), uuid)) !== undefined) {
      ctx.io.err(`Cell with uuid ${uuid} already exists.`);
      return 2;
    }
    const { cell } = await createCellMapping(ctx.apiDb(), {
      uuid,
      name: option(args, 'name') ?? null,
      transportUrl,
      databaseConnection,
      disabled: flag(args, 'disabled'),
    });
    if (flag(args, 'verbose')) ctx.io.out(cell.uuid);
    return 0;
  },
};

export const listCells: Command = {
  usage: 'cell_v2 list_cells [--verbose]',
  help: 'List cells; passwords are masked unless --verbose.',
  flags: ['verbose'],
  async run(ctx, args) {
    const verbose = flag(args, 'verbose');
    const show = (url: string): string => (verbose ? url : maskPassword(url));
    const cells = [...(await listCellMappings(ctx.apiDb()))].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
    ctx.io.out(
      renderTable(
        ['Name', 'UUID', 'Transport URL', 'Database Connection', 'Disabled'],
        cells.map((c) => [c.name, c.uuid, show(c.transportUrl), show(c.databaseConnection), c.disabled]),
      ),
    );
    return 0;
  },
};

export const listHosts: Command = {
  usage: 'cell_v2 list_hosts [--cell_uuid UUID]',
  help: 'List mapped hosts, of every cell or of one.',
  options: ['cell_uuid'],
  async run(ctx, args) {
    const cellUuid = option(args, 'cell_uuid');
    if (cellUuid !== undefined && (await getCellMapping(ctx.apiDb(), cellUuid)) === undefined) {
      ctx.io.err(`Cell with uuid ${cellUuid} was not found.`);
      return 1;
    }
    const hosts = await listHostMappings(ctx.apiDb(), cellUuid === undefined ? {} : { cellUuid });
    ctx.io.out(
      renderTable(
        ['Cell Name', 'Cell UUID', 'Hostname'],
        [...hosts].sort((a, b) => a.host.localeCompare(b.host)).map((h) => [h.cellName, h.cellUuid, h.host]),
      ),
    );
    return 0;
  },
};

export const discoverHostsCommand: Command = {
  usage: 'cell_v2 discover_hosts [--cell_uuid UUID] [--verbose] [--strict] [--by-service]',
  help: 'Map compute hosts not yet mapped (from compute_nodes, or services with --by-service). --strict: exit 1 if none was new.',
  flags: ['verbose', 'strict', 'by_service'],
  options: ['cell_uuid'],
  async run(ctx, args) {
    const cellUuid = option(args, 'cell_uuid');
    const verbose = flag(args, 'verbose');
    const added = await discoverHosts(ctx, {
      cellUuid,
      byService: flag(args, 'by_service'),
      status: (m) => {
        if (verbose) ctx.io.out(m);
      },
    });
    if (added === undefined) {
      ctx.io.err(`Cell with uuid ${cellUuid ?? ''} was not found.`);
      return 1;
    }
    return flag(args, 'strict') && added.length === 0 ? 1 : 0;
  },
};
