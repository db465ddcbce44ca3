import type { CastContext } from '@cellsched/bus';
import { getService, listComputeNodes, setServiceDisabled } from '@cellsched/cell-db';
import type { UpdateServiceRequest } from '@cellsched/wire';
import type { CellRegistry } from './cells';

/** Sets or clears COMPUTE_STATUS_DISABLED on a compute node's resource provider. Idempotent. */
export interface ComputeStatusReporter {
  setComputeStatusDisabled(providerUuid: string, disabled: boolean): Promise<void>;
}

/**
 * `update_service` (api 1.1; os-services enable/disable): writes the service's `disabled`
 * and reason in its cell DB (the api never writes a cell DB), then mirrors it on each of the
 * host's compute node providers as the COMPUTE_STATUS_DISABLED trait (Nova's
 * ComputeFilter/pre-filter). Idempotent: the last cast wins. An unknown service is logged
 * and acked (nothing to change).
 */
export function updateServiceHandler(cells: CellRegistry, reporter: ComputeStatusReporter) {
  return async (req: UpdateServiceRequest, ctx: CastContext): Promise<void> => {
    const cell = cells.cell(req.cellUuid);
    const svc = await getService(cell.pool, req.host, req.binary || 'nova-compute');
    if (svc === undefined) {
      ctx.logger.warn({ host: req.host, target_cell: cell.name }, 'update_service: no such service');
      return;
    }
    await setServiceDisabled(cell.pool, svc.id, req.disabled, req.disabled ? (req.disabledReason || null) : null);
    for (const node of await listComputeNodes(cell.pool, { host: req.host })) await reporter.setComputeStatusDisabled(node.uuid, req.disabled);
    ctx.logger.info({ service_host: req.host, target_cell: cell.name, disabled: req.disabled }, 'service updated');
  };
}
