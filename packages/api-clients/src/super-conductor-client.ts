import type { Bus, CastClient, CastReceipt } from '@cellsched/bus';
import {
  SuperConductorServiceService,
  type DeleteInstanceRequest,
  type DeleteServiceRequest,
  type ScheduleAndBuildInstancesRequest,
  type ServerActionRequest,
  type UpdateServiceRequest,
} from '@cellsched/wire';

/**
 * The casts the API sends to the super-conductor (API bus, topic `conductor`). Every cast
 * resolves only once the broker confirmed it (persistent, quorum queue); a rejection may
 * still have queued it once, so retrying is safe: the super-conductor's handlers are
 * idempotent (a re-cast is the same as a redelivery).
 */
export interface SuperConductorCaster {
  /** `schedule_and_build_instances`: one cast per create request (multi-create included). */
  scheduleAndBuildInstances(req: ScheduleAndBuildInstancesRequest, opts?: { timeoutMs?: number }): Promise<CastReceipt>;
  /** `delete_instance` (1.1): delete a server that already has a cell. */
  deleteInstance(req: DeleteInstanceRequest, opts?: { timeoutMs?: number }): Promise<CastReceipt>;
  /** `update_service` (1.1): enable/disable a compute service in a cell. */
  updateService(req: UpdateServiceRequest, opts?: { timeoutMs?: number }): Promise<CastReceipt>;
  /** `delete_service` (1.2): delete a service (a compute's: its nodes, host mapping and providers too) in a cell. */
  deleteService(req: DeleteServiceRequest, opts?: { timeoutMs?: number }): Promise<CastReceipt>;
  /** `server_action` (1.3): a server action the api accepted (its intent is recorded in the API DB). */
  serverAction(req: ServerActionRequest, opts?: { timeoutMs?: number }): Promise<CastReceipt>;
}

/** {@link SuperConductorCaster} over a connected API {@link Bus}. */
export class SuperConductorClient implements SuperConductorCaster {
  private readonly client: CastClient<SuperConductorServiceService>;

  constructor(bus: Bus) {
    this.client = bus.castClient(SuperConductorServiceService);
  }

  scheduleAndBuildInstances(req: ScheduleAndBuildInstancesRequest, opts: { timeoutMs?: number } = {}): Promise<CastReceipt> {
    return this.client.cast('scheduleAndBuildInstances', req, opts);
  }

  deleteInstance(req: DeleteInstanceRequest, opts: { timeoutMs?: number } = {}): Promise<CastReceipt> {
    return this.client.cast('deleteInstance', req, opts);
  }

  updateService(req: UpdateServiceRequest, opts: { timeoutMs?: number } = {}): Promise<CastReceipt> {
    return this.client.cast('updateService', req, opts);
  }

  deleteService(req: DeleteServiceRequest, opts: { timeoutMs?: number } = {}): Promise<CastReceipt> {
    return this.client.cast('deleteService', req, opts);
  }

  serverAction(req: ServerActionRequest, opts: { timeoutMs?: number } = {}): Promise<CastReceipt> {
    return this.client.cast('serverAction', req, opts);
  }
}
