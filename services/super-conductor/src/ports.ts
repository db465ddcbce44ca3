/**
 * The ports of the super-conductor's domain core (src/domain): the scheduler, placement's release,
 * and one cell's bus and database as a build needs them. Adapters implement them
 * (adapters/scheduler-selector.ts, adapters/cell-ports.ts). The domain imports no I/O library.
 * An outcome the super-conductor plans for (NoValidHost, a cast nobody serves, a guard that no
 * longer holds) is a value; a thrown error is a dependency that is down, and the whole cast is
 * rerun (in-delivery retry, then redelivery), so each port says whether it is safe to repeat.
 */
import type { BuildAndRunInstanceRequest, BuildInstancesRequest, Failure, RequestSpec, Selection, TerminateInstanceRequest } from '@cellsched/wire';

/** The outcome of one SelectDestinations call; transport errors worth a redelivery throw instead. */
export type SelectOutcome =
  | { readonly kind: 'selected'; readonly destinations: readonly (readonly Selection[])[] }
  /** NoValidHost (the scheduler released every claim of the request). */
  | { readonly kind: 'no_valid_host'; readonly failure: Failure }
  /** Any other non-retryable failure: the instances are buried in cell0 with it. */
  | { readonly kind: 'failed'; readonly failure: Failure };

/**
 * The scheduler, as the super-conductor sees it. `selectDestinations` claims in placement
 * (replace semantics per consumer, so a repeat for the same instances does not double a
 * claim) and returns one list per instance: the chosen host first, then `numAlternates`
 * alternates in the same cell. Throws when the call may succeed if retried later.
 */
export interface DestinationSelector {
  selectDestinations(spec: RequestSpec, instanceUuids: readonly string[], numAlternates: number): Promise<SelectOutcome>;
}

/** Releases consumers' allocations in placement. Idempotent. */
export interface ClaimReleaser {
  release(consumerUuids: readonly string[]): Promise<void>;
}

/** A cast's fate: queued, or refused by the broker because no queue is bound to its key (nothing queued). */
export type CastResult = 'sent' | 'unroutable';

/**
 * One cell's bus, as the super-conductor casts into it. At-least-once: a cast may arrive twice, and
 * its receiver dedups (the compute by host, instance and attempt; the cell conductor by host and
 * attempt), so repeating one is safe. Throws when the bus cannot take it now (retryable).
 */
export interface CellCaster {
  /** `build_and_run_instance` to `compute.<host>`; `unroutable`: no compute serves that host. */
  buildAndRunInstance(host: string, request: BuildAndRunInstanceRequest): Promise<CastResult>;
  /** `build_instances` to the cell conductor; `unroutable`: the cell has no conductor queue (or no bus). */
  buildInstances(request: BuildInstancesRequest): Promise<CastResult>;
  /** `terminate_instance` to `compute.<host>`; `unroutable` is done: no compute serves that host, so no guest runs there. */
  terminateInstance(host: string, request: TerminateInstanceRequest): Promise<CastResult>;
}

/** One cell's database, as a build the super-conductor gives up on writes it. */
export interface CellBuildRecords {
  /**
   * In one transaction, guarded on the instance still building on `host`: ERROR, the fault, and the
   * create action's compute-build event in Error (when there is a request id). False: the guard
   * failed, nothing written. Idempotent.
   */
  failBuild(instanceUuid: string, host: string, requestId: string, fault: { readonly message: string; readonly details: string }): Promise<boolean>;
}

/** What a build in one cell needs. */
export interface CellBuildPorts {
  readonly cell: CellCaster;
  readonly builds: CellBuildRecords;
  readonly claims: ClaimReleaser;
}

/** Where the domain says what it did (a pino logger fits; the adapters bind the cast's fields). */
export interface ConductorLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
