import { getHostMapping, listAggregates, listCellMappings } from '@cellsched/api-db';
import { listComputeNodes } from '@cellsched/cell-db';
import { PlacementRestError } from '@cellsched/placement-client';
import { flag } from '../args';
import type { Command, CommandContext } from './types';

// `nova-manage placement sync_aggregates`: every host of every aggregate put into the
// aggregate on its compute node's provider in placement, mending what the api could not mirror
// (os-aggregates add_host logs such a failure and goes on, as Nova's does). Adds only.

/** Why a host's provider is not known: no host mapping, no compute node, or too many (Nova's exit 1). */
type Found = { readonly rp: string } | { readonly missing: 'unmapped' | 'no_compute' } | { readonly tooMany: number };

async function providerOf(ctx: CommandContext, host: string): Promise<Found> {
  const mapping = await getHostMapping(ctx.apiDb(), host);
  const cell = mapping === undefined ? undefined : (await listCellMappings(ctx.apiDb())).find((c) => c.uuid === mapping.cellUuid);
  if (cell === undefined) return { missing: 'unmapped' };
  const nodes = await listComputeNodes(ctx.openDb(cell.databaseConnection), { host });
  if (nodes.length > 1) return { tooMany: nodes.length };
  return nodes[0] === undefined ? { missing: 'no_compute' } : { rp: nodes[0].uuid };
}

/** Nova's closing report (exit 4, 5, 6: the last that applies), or 0. */
function report(ctx: CommandContext, unmapped: Set<string>, noCompute: Set<string>, noProvider: Map<string, string>): number {
  let code = 0;
  if (unmapped.size > 0) {
    ctx.io.out(
      `The following hosts were found in nova host aggregates but no host mappings were found in the nova API DB. Run "cellsched-manage cell_v2 discover_hosts" and then retry. Missing: ${[...unmapped].join(',')}`,
    );
    code = 4;
  }
  if (noCompute.size > 0) {
    ctx.io.out(
      `Unable to find matching compute_nodes record entries in the cell database for the following hosts; does the nova-compute service on each host need to be restarted? Missing: ${[...noCompute].join(',')}`,
    );
    code = 5;
  }
  if (noProvider.size > 0) {
    const list = [...noProvider.keys()]
      .sort()
      .map((h) => `(${h}=${noProvider.get(h) ?? ''})`)
      .join(',');
    ctx.io.out(
      `Unable to find matching resource provider record in placement with uuid for the following hosts: ${list}. Try restarting the nova-compute service on each host and then retry.`,
    );
    code = 6;
  }
  return code;
}

export const placementSyncAggregates: Command = {
  usage: 'placement sync_aggregates [--verbose]',
  help:
    "Add every aggregate's hosts to the aggregate on their compute node providers in placement (nova-manage's). " +
    'Exit 0 done, 1 a host with several compute nodes, 3 placement refused an update, 4 unmapped hosts, 5 hosts without a compute node, 6 providers not found. Needs --placement-url.',
  flags: ['verbose'],
  async run(ctx, args) {
    const placement = ctx.placement();
    const verbose = flag(args, 'verbose') ? (line: string) => ctx.io.out(line) : () => undefined;
    const [unmapped, noCompute, noProvider, providers] = [
      new Set<string>(),
      new Set<string>(),
      new Map<string, string>(),
      new Map<string, string>(),
    ];
    verbose('Filling in missing placement aggregates');
    for (const aggregate of await listAggregates(ctx.apiDb())) {
      verbose(`Processing aggregate: ${aggregate.name}`);
      for (const host of aggregate.hosts) {
        verbose(`Processing host: ${host}`);
        let rp = providers.get(host);
        if (rp === undefined) {
          const found = await providerOf(ctx, host);
          if ('tooMany' in found) {
            ctx.io.out(
              `Unexpected number of compute node records (${found.tooMany}) found for host ${host}. There should only be a one-to-one mapping.`,
            );
            return 1;
          }
          if ('missing' in found) {
            (found.missing === 'unmapped' ? unmapped : noCompute).add(host);
            continue;
          }
          rp = found.rp;
          providers.set(host, rp);
        }
        try {
          await placement.addProviderAggregate(rp, aggregate.uuid);
          verbose(`Successfully added host (${host}) and provider (${rp}) to aggregate (${aggregate.uuid}).`);
        } catch (err) {
          if (err instanceof PlacementRestError && err.status === 404) {
            noProvider.set(host, rp);
            continue;
          }
          if (!(err instanceof PlacementRestError)) throw err;
          ctx.io.out(
            `Failed updating provider aggregates for host (${host}), provider (${rp}) and aggregate (${aggregate.uuid}). Error: ${err.message}`,
          );
          return 3;
        }
      }
    }
    return report(ctx, unmapped, noCompute, noProvider);
  },
};
