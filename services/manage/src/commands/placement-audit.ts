import { PlacementRestError, type ReportClient, type ResourceProviderRef } from '@cellsched/placement-client';
import { computeNodeIndex, gatherConsumerFacts, mappedCells, type CellDb } from '../adapters/consumer-facts';
import { flag, option } from '../args';
import { describeOrphan, formatResources, isNovaAllocation, judgeAllocation, type NodeRef } from '../domain/orphan-allocations';
import type { Command, CommandContext } from './types';

/** Providers judged per round: their allocations, then one read of every cell for their consumers. */
const PAGE = 100;
/** Provider allocation reads in flight at once (a 10,000-host cloud has 10,000 providers to read). */
const READS_AT_ONCE = 8;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

interface Audit {
  readonly ctx: CommandContext;
  readonly placement: ReportClient;
  readonly cells: readonly CellDb[];
  readonly nodes: ReadonlyMap<string, NodeRef>;
  readonly verbose: (line: string) => void;
  readonly remove: boolean;
}

/** A provider's allocations by consumer; a provider deleted since it was listed has none. */
async function providerAllocations(placement: ReportClient, rp: ResourceProviderRef): Promise<Record<string, Record<string, number>>> {
  try {
    return await placement.providerAllocations(rp.uuid);
  } catch (err) {
    if (err instanceof PlacementRestError && err.status === 404) return {};
    throw err;
  }
}

/** Nova's `_delete_allocations_from_consumer`, guarded by the consumer generation: false if it could not be done. */
async function removeFromConsumer(placement: ReportClient, consumer: string, providerUuid: string): Promise<boolean> {
  const seen = await placement.getConsumerAllocations(consumer);
  if (seen.allocations[providerUuid] === undefined) return true; // released meanwhile
  try {
    await placement.removeProviderFromConsumer(consumer, seen, providerUuid);
    return true;
  } catch (err) {
    if (err instanceof PlacementRestError && err.status === 409) return false; // the consumer was written since it was read
    throw err;
  }
}

/** One round over some providers: returns [orphaned allocations found, the provider that had a fault]. */
async function auditPage(a: Audit, page: readonly ResourceProviderRef[]): Promise<[number, string | undefined]> {
  const allocs = new Map<string, Record<string, Record<string, number>>>();
  for (let i = 0; i < page.length; i += READS_AT_ONCE) {
    const batch = page.slice(i, i + READS_AT_ONCE);
    (await Promise.all(batch.map((rp) => providerAllocations(a.placement, rp)))).forEach((byConsumer, j) =>
      allocs.set(batch[j]?.uuid ?? '', byConsumer),
    );
  }
  const consumers = [...new Set([...allocs.values()].flatMap((byConsumer) => Object.keys(byConsumer)))];
  const facts = await gatherConsumerFacts(a.ctx.apiDb(), a.cells, consumers);
  let found = 0;
  for (const rp of page) {
    const node = a.nodes.get(rp.rootProviderUuid);
    if (node === undefined) a.verbose(`The compute node for UUID ${rp.rootProviderUuid} can not be found`);
    for (const [consumer, resources] of Object.entries(allocs.get(rp.uuid) ?? {})) {
      const f = facts.get(consumer);
      const reason = f === undefined || !isNovaAllocation(resources) ? undefined : judgeAllocation(node, f);
      if (reason === undefined || f === undefined) continue;
      a.verbose(describeOrphan(consumer, reason, f));
      found++;
      if (!a.remove) {
        a.verbose(
          `Allocations for consumer UUID ${consumer} on Resource Provider ${rp.uuid} can be deleted: ${formatResources(resources)}`,
        );
        continue;
      }
      if (!(await removeFromConsumer(a.placement, consumer, rp.uuid))) {
        a.ctx.io.out(`Not able to delete allocations for consumer UUID ${consumer}`);
        return [found, rp.uuid];
      }
      a.verbose(`Deleted allocations for consumer UUID ${consumer} on Resource Provider ${rp.uuid}: ${formatResources(resources)}`);
    }
  }
  return [found, undefined];
}

/** The providers to walk, or undefined when `--resource_provider` names none (exit 127). */
async function providersToAudit(
  ctx: CommandContext,
  placement: ReportClient,
  uuid: string | undefined,
): Promise<ResourceProviderRef[] | undefined> {
  if (uuid === undefined) return placement.listResourceProviders();
  const found = UUID.test(uuid) ? await placement.listResourceProviders({ uuid }) : [];
  if (found.length === 0) ctx.io.out(`Resource provider with UUID ${uuid} does not exist.`);
  return found.length === 0 ? undefined : found;
}

export const placementAudit: Command = {
  usage: 'placement audit [--verbose] [--delete] [--resource_provider UUID]',
  help:
    'Find allocations in placement that no instance (in any cell, cell0 included), migration or build request holds; --delete removes them. ' +
    'Exit 0 none found, 3 found, 4 found and deleted, 1 error, 127 no such resource provider. Needs --placement-url.',
  flags: ['verbose', 'delete'],
  options: ['resource_provider'],
  async run(ctx, args) {
    const placement = ctx.placement();
    const providers = await providersToAudit(ctx, placement, option(args, 'resource_provider'));
    if (providers === undefined) return 127;
    const cells = await mappedCells(ctx);
    const audit: Audit = {
      ctx,
      placement,
      cells,
      nodes: await computeNodeIndex(cells),
      remove: flag(args, 'delete'),
      verbose: flag(args, 'verbose') ? (line) => ctx.io.out(line) : () => undefined,
    };
    let processed = 0;
    for (let i = 0; i < providers.length; i += PAGE) {
      const [found, faulty] = await auditPage(audit, providers.slice(i, i + PAGE));
      processed += found;
      if (faulty !== undefined) {
        ctx.io.out(
          `The Resource Provider ${faulty} had problems when deleting allocations. Stopping now. Please fix the problem by hand and run again.`,
        );
        return 1;
      }
    }
    if (processed === 0) return 0;
    audit.verbose(`Processed ${processed} allocation${processed > 1 ? 's.' : '.'}`);
    return audit.remove ? 4 : 3;
  },
};
