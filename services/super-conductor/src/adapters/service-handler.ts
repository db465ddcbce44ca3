import type { CastContext } from '@cellsched/bus';
import { getService, listComputeNodes, setServiceDisabled, setServiceForcedDown } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { UpdateServiceRequest } from '@cellsched/wire';
import type { CellRegistry } from './cells';

/** Sets or clears COMPUTE_STATUS_DISABLED on a compute node's resource provider. Idempotent. */
export interface ComputeStatusReporter {
  setComputeStatusDisabled(providerUuid: string, disabled: boolean): Promise<void>;
}

/**
 * `update_service` (api 1.1; os-services enable/disable; 1.3 force down): writes the service's
 * `disabled` and reason (unless `only_forced_down`) and `forced_down` (when given) in its cell
 * DB in one transaction (the api never writes a cell DB), then mirrors `disabled` on each of
 * the host's compute node providers as the COMPUTE_STATUS_DISABLED trait (Nova's
 * ComputeFilter/pre-filter; forced_down is not a trait in Nova either: a forced-down service
 * is simply down). Idempotent: the last cast wins. An unknown service is logged and acked
 * (nothing to change).
 */
export function updateServiceHandler(cells: CellRegistry, reporter: ComputeStatusReporter) {
  return async (req: UpdateServiceRequest, ctx: CastContext): Promise<void> => {
    const cell = cells.cell(req.cellUuid);
    const svc = await getService(cell.pool, req.host, req.binary || 'nova-compute');
    if (svc === undefined) {
      ctx.logger.warn({ host: req.host, target_cell: cell.name }, 'update_service: no such service');
      return;
    }
    const disabled = req.onlyForcedDown !== true;
    await withTransaction(cell.pool, async (c) => {
      if (disabled) await setServiceDisabled(c, svc.id, req.disabled, req.disabled ? req.disabledReason || null : null);
      if (req.forcedDown !== undefined) await setServiceForcedDown(c, svc.id, req.forcedDown);
    });
    if (disabled)
      for (const node of await listComputeNodes(cell.pool, { host: req.host }))
        await reporter.setComputeStatusDisabled(node.uuid, req.disabled);
    ctx.logger.info(
      { service_host: req.host, target_cell: cell.name, disabled: disabled ? req.disabled : undefined, forced_down: req.forcedDown },
      'service updated',
    );
  };
}
