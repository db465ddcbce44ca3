import { clearServerTaskIntent, getRequestSpec, getServerTaskIntent, saveRequestSpec } from '@cellsched/api-db';
import type { CastContext } from '@cellsched/bus';
import type { ServerActionRequest } from '@cellsched/wire';
import type { Pool } from 'pg';
import { runServerAction, type ServerActionSettings } from '../domain/server-action-flow';
import { planServerAction } from '../domain/server-actions';
import type { CellActionCaster, DestinationSelector, MoveClaims, ServerActionApi } from '../ports';
import type { CellHandle, CellRegistry } from './cells';
import { castTo } from './cell-ports';
import { serverActionRecords } from './server-action-records';

/** What the `server_action` handler needs. */
export interface ServerActionDeps {
  readonly apiDb: Pool;
  readonly cells: CellRegistry;
  readonly selector: DestinationSelector;
  readonly claims: MoveClaims;
  readonly settings: ServerActionSettings;
}

/** {@link ServerActionApi} over the API database (request_specs, server_task_intents). */
export function serverActionApi(apiDb: Pool): ServerActionApi {
  return {
    requestSpec: (uuid) => getRequestSpec(apiDb, uuid),
    saveRequestSpec: async (spec) => {
      await saveRequestSpec(apiDb, spec);
    },
    intentPending: async (uuid, requestId) => (await getServerTaskIntent(apiDb, uuid))?.requestId === requestId,
    clearIntent: async (uuid, requestId) => {
      await clearServerTaskIntent(apiDb, uuid, requestId);
    },
  };
}

/** {@link CellActionCaster} over a cell's bus: `instance_action` to its conductor; a cell without one (cell0) is `unroutable`. */
export function cellActionCaster(cell: CellHandle): CellActionCaster {
  return {
    instanceAction: async (request) => {
      const conductor = cell.conductor;
      return conductor === undefined ? 'unroutable' : castTo(() => conductor.cast('instanceAction', request));
    },
  };
}

/**
 * `server_action` (api 1.3; Nova's compute_api action methods behind POST /servers/{id}/action):
 * the domain's flow ({@link runServerAction}) over the instance's cell (database and bus), the
 * scheduler, placement and the API DB. A cast naming no known action is logged and its intent
 * cleared (nothing was applied). A cell not open yet throws retryable (the cast is retried).
 * Idempotent per request id.
 */
export function serverActionHandler(deps: ServerActionDeps) {
  return async (req: ServerActionRequest, ctx: CastContext): Promise<void> => {
    const log = ctx.logger.child({ request_id: req.requestId, instance_uuid: req.instanceUuid, action: req.action });
    const plan = planServerAction(req);
    if ('invalid' in plan) {
      log.warn({ reason: plan.invalid }, 'server_action refused: invalid cast');
      if (req.instanceUuid !== '' && req.requestId !== '')
        await clearServerTaskIntent(deps.apiDb, req.instanceUuid, req.requestId).catch(() => false);
      return;
    }
    const cell = deps.cells.cell(req.cellUuid);
    const ports = {
      records: serverActionRecords(cell.pool),
      cell: cellActionCaster(cell),
      cellName: cell.name,
      api: serverActionApi(deps.apiDb),
      selector: deps.selector,
      claims: deps.claims,
    };
    const outcome = await runServerAction(ports, log, deps.settings, plan);
    log.debug({ outcome, target_cell: cell.name }, 'server_action done');
  };
}
