import type { Bus, CastSubscription } from '@cellsched/bus';
import { retryTransient } from '@cellsched/transient-retry';
import { SuperConductorServiceService } from '@cellsched/wire';
import type { Pool } from 'pg';
import { cellInstanceWriters, cellMappingWriter } from './adapters/build-deps';
import type { CellRegistry } from './adapters/cells';
import { deleteInstanceHandler } from './adapters/delete-handler';
import { deleteServiceHandler, type ServiceProviders } from './adapters/delete-service-handler';
import { scheduleAndBuildInstancesHandler } from './adapters/schedule-handler';
import { serverActionHandler } from './adapters/server-action-handler';
import { updateServiceHandler } from './adapters/service-handler';
import type { ClaimReleaser, DestinationSelector, MoveClaims } from './ports';

export interface SuperConductorOptions {
  readonly apiDb: Pool;
  /** The API bus (topic `conductor`). */
  readonly apiBus: Bus;
  readonly cells: CellRegistry;
  readonly selector: DestinationSelector;
  readonly claims: ClaimReleaser & MoveClaims;
  /** Placement's REST report client (COMPUTE_STATUS_DISABLED, deleting a deleted host's providers). */
  readonly reporter: ServiceProviders;
  readonly numAlternates: number;
  readonly buildTimeoutMs: number;
  readonly prefetch: number;
  /** The host Nova's conductor events of server actions are recorded on (this process's host name). */
  readonly conductorHost: string;
  /** Nova's allow_resize_to_same_host (default false). */
  readonly allowResizeToSameHost?: boolean;
  /** Nova's service_down_time in ms (default 60 s): a forced live migration's host must have reported within it. */
  readonly serviceDownTimeMs?: number;
  /** How long one delivery retries while placement, a scheduler, a database or a cell bus is unavailable (default 30 s; 0: none). */
  readonly dependencyRetryMs?: number;
}

/**
 * Serves the API bus topic `conductor` (SuperConductorService 1.4: schedule_and_build_instances,
 * delete_instance, update_service, delete_service, server_action). Returns the subscription
 * (close it to stop consuming; in-flight casts finish and are acked).
 */
export async function startSuperConductor(o: SuperConductorOptions): Promise<CastSubscription> {
  const deps = {
    apiDb: o.apiDb,
    cells: o.cells,
    claims: o.claims,
    buildTimeoutMs: o.buildTimeoutMs,
    cellMappings: cellMappingWriter(o.apiDb),
    cellInstances: cellInstanceWriters(),
    selector: o.selector,
    numAlternates: o.numAlternates,
  };
  // NOTE: the bus's 10 deliveries pass in ~20 s; placement or the scheduler restarting under load takes longer
  const retry = { budgetMs: o.dependencyRetryMs ?? 30_000 };
  return o.apiBus.serve(
    SuperConductorServiceService,
    {
      scheduleAndBuildInstances: retryTransient(scheduleAndBuildInstancesHandler(deps), retry),
      deleteInstance: retryTransient(deleteInstanceHandler(deps), retry),
      updateService: retryTransient(updateServiceHandler(o.cells, o.reporter), retry),
      deleteService: retryTransient(deleteServiceHandler({ apiDb: o.apiDb, cells: o.cells, providers: o.reporter }), retry),
      serverAction: retryTransient(
        serverActionHandler({
          apiDb: o.apiDb,
          cells: o.cells,
          selector: o.selector,
          claims: o.claims,
          settings: {
            conductorHost: o.conductorHost,
            numAlternates: o.numAlternates,
            allowResizeToSameHost: o.allowResizeToSameHost ?? false,
            serviceDownTimeMs: o.serviceDownTimeMs,
          },
        }),
        retry,
      ),
    },
    { prefetch: o.prefetch, maxDeliveries: 10 },
  );
}
