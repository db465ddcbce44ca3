import type { Bus, CastSubscription } from '@cellsched/bus';
import type { PlacementClient } from '@cellsched/placement-client';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import type { Pool } from 'pg';
import { buildAbortedHandler, buildSucceededHandler } from './adapters/build-result-handlers';
import { reportComputeHostsHandler, serviceHeartbeatsHandler } from './adapters/host-handlers';
import { PlacementInstanceClaimer } from './adapters/placement-claimer';
import { buildInstancesHandler, type BuildDeps } from './adapters/reschedule-handler';

export interface CellConductorOptions {
  readonly pool: Pool;
  /** The cell's bus: its credentials reach this vhost only. */
  readonly bus: Bus;
  readonly placement: PlacementClient;
  readonly cellUuid: string;
  readonly buildTimeoutMs: number;
  readonly prefetch: number;
}

/**
 * Serves the cell bus topic `conductor` (CellConductorService): build results, the in-cell
 * retry, service and compute-node reports, heartbeats. Returns the subscription (cancel it
 * to stop consuming; in-flight casts finish and are acked).
 */
export async function startCellConductor(o: CellConductorOptions): Promise<CastSubscription> {
  const deps: BuildDeps = {
    pool: o.pool, claimer: new PlacementInstanceClaimer(o.placement), compute: o.bus.castClient(ComputeServiceService),
    cellUuid: o.cellUuid, buildTimeoutMs: o.buildTimeoutMs,
  };
  return o.bus.serve(CellConductorServiceService, {
    buildInstances: buildInstancesHandler(deps),
    buildSucceeded: buildSucceededHandler(deps),
    buildAborted: buildAbortedHandler(deps),
    reportComputeHosts: reportComputeHostsHandler(o.pool),
    serviceHeartbeats: serviceHeartbeatsHandler(o.pool),
  }, { prefetch: o.prefetch, maxDeliveries: 10 });
}
