import { deleteHostMapping, listAggregates, removeAggregateHost } from '@cellsched/api-db';
import type { CastContext } from '@cellsched/bus';
import {
  addPendingProvidersOfService,
  deleteServices,
  getServiceById,
  hostUsage,
  listComputeNodes,
  type HostUsage,
  type ServiceRecord,
} from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { DeleteServiceRequest } from '@cellsched/wire';
import type { Pool, PoolClient } from 'pg';
import type { CellRegistry } from './cells';
import type { ComputeStatusReporter } from './service-handler';

/** Placement as a service delete needs it (the REST report client implements it). Idempotent. */
export interface ServiceProviders extends ComputeStatusReporter {
  /** Deletes the provider tree; `in_use` when allocations still hold it (nothing holding them is deleted). */
  deleteResourceProvider(uuid: string): Promise<'deleted' | 'absent' | 'in_use'>;
}

export interface DeleteServiceDeps {
  readonly apiDb: Pool;
  readonly cells: CellRegistry;
  readonly providers: ServiceProviders;
}

type CellOutcome =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'deleted'; readonly service: ServiceRecord }
  | { readonly kind: 'in_use'; readonly service: ServiceRecord; readonly usage: HostUsage }
  | { readonly kind: 'deletable'; readonly service: ServiceRecord; readonly nodes: readonly string[] };

/**
 * Nova's conditions, judged under the service row's lock: a compute service is not deleted while
 * its host has instances or in-progress migrations (the api checked them too; this is the check
 * that counts). `deleted`: an earlier delivery finished the delete (the service row goes last).
 */
async function judgeInCell(c: PoolClient, req: DeleteServiceRequest): Promise<CellOutcome> {
  const service = await getServiceById(c, req.serviceUuid, { includeDeleted: true, forUpdate: true });
  if (service === undefined) return { kind: 'unknown' };
  if (service.deletedAt !== null) return { kind: 'deleted', service };
  const nodes = (await listComputeNodes(c, { serviceId: service.id })).filter((n) => n.deletedAt === null);
  if (service.binary === 'nova-compute') {
    const usage = await hostUsage(
      c,
      service.host,
      nodes.map((n) => n.hypervisorHostname),
    );
    if (usage.instances > 0 || usage.migrations.length > 0) return { kind: 'in_use', service, usage };
  }
  return { kind: 'deletable', service, nodes: nodes.map((n) => n.uuid) };
}

/** Nova's API-level cleanup of a deleted compute host: out of every aggregate. */
async function leaveAggregates(apiDb: Pool, host: string): Promise<void> {
  for (const a of await listAggregates(apiDb, { host })) await removeAggregateHost(apiDb, a.uuid, host);
}

/**
 * Deletes the nodes' providers from placement. One still holding allocations (a claim that raced
 * the delete) is kept, made unschedulable, and queued for the cell conductor's sweep of retired
 * providers; the allocations are never deleted here (they are an instance's, whose build is
 * retried elsewhere by the cell conductor's watchdog).
 */
async function removeProviders(deps: DeleteServiceDeps, pool: Pool, service: ServiceRecord, nodes: readonly string[]): Promise<string[]> {
  const kept: string[] = [];
  for (const uuid of nodes) {
    if ((await deps.providers.deleteResourceProvider(uuid)) !== 'in_use') continue;
    await deps.providers.setComputeStatusDisabled(uuid, true);
    kept.push(uuid);
  }
  if (kept.length > 0) await addPendingProvidersOfService(pool, service.id, kept);
  return kept;
}

/**
 * `delete_service` (api 1.2; Nova's os-services DELETE, done here because the api never writes a
 * cell DB), in Nova's order: refused (logged, nothing changed) while the host still has instances
 * or in-progress migrations; otherwise the host leaves its aggregates, its resource providers are
 * deleted from placement, its host mapping goes (this cell's only), and last the service and its
 * compute nodes are soft-deleted in the cell (the scheduler's host cache drops them at its next
 * refresh). The service row going last makes it the completion mark: the api answers 204 once it
 * is gone, so the answer means everything is done. Idempotent: a redelivery after a partial run
 * redoes the idempotent steps; one after the end finds the service deleted and acks; an unknown
 * service is logged and acked. Placement failing throws before the service is deleted (retried).
 */
export function deleteServiceHandler(deps: DeleteServiceDeps) {
  return async (req: DeleteServiceRequest, ctx: CastContext): Promise<void> => {
    const cell = deps.cells.cell(req.cellUuid);
    const fields = { service_uuid: req.serviceUuid, service_host: req.host, target_cell: cell.name };
    const outcome = await withTransaction(cell.pool, (c) => judgeInCell(c, req));
    if (outcome.kind === 'unknown' || outcome.kind === 'deleted') {
      ctx.logger.warn({ ...fields, outcome: outcome.kind }, 'delete_service: no such live service');
      return;
    }
    if (outcome.kind === 'in_use') {
      ctx.logger.warn(
        { ...fields, instances: outcome.usage.instances, migrations: outcome.usage.migrations },
        'delete_service refused: the host still has instances or in-progress migrations',
      );
      return;
    }
    const { service, nodes } = outcome;
    let kept: string[] = [];
    if (service.binary === 'nova-compute') {
      await leaveAggregates(deps.apiDb, service.host);
      kept = await removeProviders(deps, cell.pool, service, nodes);
      await deleteHostMapping(deps.apiDb, service.host, { cellUuid: cell.uuid });
    }
    await deleteServices(cell.pool, [service.id]);
    ctx.logger.info({ ...fields, providers: nodes, providers_kept: kept }, 'service deleted');
  };
}
