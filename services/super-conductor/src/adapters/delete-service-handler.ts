import { deleteHostMapping, listAggregates, removeAggregateHost } from '@cellsched/api-db';
import type { CastContext } from '@cellsched/bus';
import {
  addPendingProvidersOfService, deleteServices, getServiceById, hostUsage, listComputeNodes, type HostUsage, type ServiceRecord,
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
  | { readonly kind: 'in_use'; readonly service: ServiceRecord; readonly usage: HostUsage }
  | { readonly kind: 'deleted'; readonly service: ServiceRecord; readonly nodes: readonly string[] };

/**
 * The cell part, under the service row's lock: Nova's conditions (a compute service is not
 * deleted while its host has instances or in-progress migrations; the api checked them too, this
 * is the check that counts), then the service and its nodes soft-deleted. A service deleted by an
 * earlier delivery is `deleted` again, with its nodes, so the rest is redone.
 */
async function deleteInCell(c: PoolClient, req: DeleteServiceRequest): Promise<CellOutcome> {
  const service = await getServiceById(c, req.serviceUuid, { includeDeleted: true, forUpdate: true });
  if (service === undefined) return { kind: 'unknown' };
  const nodes = await listComputeNodes(c, { serviceId: service.id, includeDeleted: true });
  if (service.deletedAt === null) {
    if (service.binary === 'nova-compute') {
      const usage = await hostUsage(c, service.host, nodes.filter((n) => n.deletedAt === null).map((n) => n.hypervisorHostname));
      if (usage.instances > 0 || usage.migrations.length > 0) return { kind: 'in_use', service, usage };
    }
    await deleteServices(c, [service.id]);
  }
  return { kind: 'deleted', service, nodes: nodes.map((n) => n.uuid) };
}

/** Nova's API-level cleanup of a deleted compute host: out of every aggregate, its host mapping gone (this cell's only). */
async function forgetHost(apiDb: Pool, host: string, cellUuid: string): Promise<void> {
  for (const a of await listAggregates(apiDb, { host })) await removeAggregateHost(apiDb, a.uuid, host);
  await deleteHostMapping(apiDb, host, { cellUuid });
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
    if (await deps.providers.deleteResourceProvider(uuid) !== 'in_use') continue;
    await deps.providers.setComputeStatusDisabled(uuid, true);
    kept.push(uuid);
  }
  if (kept.length > 0) await addPendingProvidersOfService(pool, service.id, kept);
  return kept;
}

/**
 * `delete_service` (api 1.2; Nova's os-services DELETE, done here because the api never writes a
 * cell DB): refused (logged, nothing changed) while the host still has instances or in-progress
 * migrations; otherwise the service and its compute nodes are soft-deleted in the cell (the
 * scheduler's host cache drops them at its next refresh), the host leaves its aggregates and loses
 * its host mapping, and its providers are deleted from placement. Idempotent: a redelivery finds
 * the service deleted and redoes only the idempotent rest; an unknown service is logged and acked.
 */
export function deleteServiceHandler(deps: DeleteServiceDeps) {
  return async (req: DeleteServiceRequest, ctx: CastContext): Promise<void> => {
    const cell = deps.cells.cell(req.cellUuid);
    const outcome = await withTransaction(cell.pool, (c) => deleteInCell(c, req));
    if (outcome.kind === 'unknown') {
      ctx.logger.warn({ service_uuid: req.serviceUuid, service_host: req.host, target_cell: cell.name }, 'delete_service: no such service');
      return;
    }
    if (outcome.kind === 'in_use') {
      ctx.logger.warn({ service_host: outcome.service.host, target_cell: cell.name, instances: outcome.usage.instances, migrations: outcome.usage.migrations },
        'delete_service refused: the host still has instances or in-progress migrations');
      return;
    }
    const { service, nodes } = outcome;
    let kept: string[] = [];
    if (service.binary === 'nova-compute') {
      await forgetHost(deps.apiDb, service.host, cell.uuid);
      kept = await removeProviders(deps, cell.pool, service, nodes);
    }
    ctx.logger.info({ service_host: service.host, service_uuid: service.uuid, target_cell: cell.name, providers: nodes, providers_kept: kept }, 'service deleted');
  };
}
