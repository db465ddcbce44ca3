/**
 * The one registry of the failure codes cellsched publishes: every `Failure.code` that crosses a
 * process (a gRPC trailer, a cast's payload, an instance fault, a dead-letter header) or that a
 * caller branches on, grouped by the component that emits it. Codes follow
 * `<service>.<noun>.<condition>` (a few of Placement's own and the synthesized `grpc.<status>` ones
 * have two parts) and are **published: never change a code's text**, only add codes
 * (`test/failure-codes.test.ts` pins every one). Import them from here (`FAILURE_CODES.scheduler.noValidHost`),
 * never write the literal again. The storage layers' own exception codes (`db.*`, `api_db.*`,
 * `cell_db.*`, `config.*`) stay with those packages: each is declared once, raised and handled in-process.
 */
import type { Failure, FilterDiagnosis } from './gen/cellsched/v1/failure';

const GRPC = {
  /** A bug on the server (the real error is logged there, never sent). INTERNAL, not retryable. */
  internal: 'grpc.internal',
  /** The server's own backing service (database, network) is unavailable. UNAVAILABLE, retryable. */
  dependencyUnavailable: 'grpc.dependency_unavailable',
  /** The caller cancelled the call. Never retried. */
  cancelled: 'grpc.cancelled',
  /** Synthesized by the client for a transport failure (`grpc.<status>`); retryable. */
  unavailable: 'grpc.unavailable',
  /** Synthesized by the client: the attempt's deadline passed; retryable when the call asks. */
  deadlineExceeded: 'grpc.deadline_exceeded',
} as const;

const BUS = {
  /** The bus was closed; nothing further is sent or consumed. Not retryable on this bus. */
  closed: 'bus.closed',
  /** No broker connection within the deadline (broker down, network). Retryable. */
  unavailable: 'bus.connection.unavailable',
  /** The broker refused the credentials or the vhost. Not retryable without new config. */
  accessRefused: 'bus.connection.access_refused',
  /** Bad argument to a bus call (server name, method, options). Nothing was sent. */
  invalidArgument: 'bus.invalid_argument',
  /** The broker did not confirm within the deadline: the cast may or may not be queued. Retryable (at-least-once). */
  publishTimeout: 'bus.publish.timeout',
  /** The broker refused the message (nack). It is not queued. Retryable. */
  publishNacked: 'bus.publish.nacked',
  /** No queue is bound to the routing key, so the broker dropped the message. Not queued. */
  publishUnroutable: 'bus.publish.unroutable',
  /** The broker refused the publish (permissions: no write access to the exchange). */
  publishRefused: 'bus.publish.access_refused',
  /** The cast's RPC major version is unknown to the receiver, or its minor is newer. */
  rpcVersionUnsupported: 'bus.rpc_version.unsupported',
  /** The message lacks the method / version headers or names a method nobody serves. */
  messageInvalid: 'bus.message.invalid',
  /** The body is not a valid protobuf of the method's request type. */
  messageUndecodable: 'bus.message.undecodable',
  /** The message was delivered more times than allowed (the consumer kept dying). */
  deliveryLimit: 'bus.delivery.limit_exceeded',
  /** A handler threw something without a `code`. */
  handlerFailed: 'bus.handler.failed',
  /** A server pool's queue is consumed by another connection (another process with the same pool name). Retryable: the owner may be dying. */
  queueLocked: 'bus.queue.locked',
  /** A cast reached a server pool under a key it no longer serves, and no other queue is bound to that key now. */
  serverNotServed: 'bus.server.not_served',
} as const;

/** Placement's codes: those of `placement/errors.py` (REST error bodies and gRPC Failures alike), then ours. */
const PLACEMENT = {
  undefinedCode: 'placement.undefined_code',
  inventoryInUse: 'placement.inventory.inuse',
  /** A concurrent write moved a generation: the same write may succeed at once. ABORTED. */
  concurrentUpdate: 'placement.concurrent_update',
  duplicateName: 'placement.duplicate_name',
  providerInUse: 'placement.resource_provider.inuse',
  providerCannotDeleteParent: 'placement.resource_provider.cannot_delete_parent',
  providerNotFound: 'placement.resource_provider.not_found',
  queryDuplicateKey: 'placement.query.duplicate_key',
  queryBadValue: 'placement.query.bad_value',
  queryMissingValue: 'placement.query.missing_value',
  /** gRPC: a claim that does not fit (class and provider in metadata). FAILED_PRECONDITION, not retryable there. */
  capacityExceeded: 'placement.allocation.capacity_exceeded',
  /** gRPC: invalid input without a more specific Placement code. */
  requestInvalid: 'placement.request.invalid',
  /** gRPC: the claim's server group forbids that host (group, compute node and a member in metadata). FAILED_PRECONDITION. */
  claimGroupPolicy: 'placement.claim.group_policy',
} as const;

/** Raised by `@cellsched/placement-client` itself. */
const PLACEMENT_CLIENT = {
  /** A Selection's opaque allocation request is not Placement's allocation-candidates shape. */
  allocationRequestInvalid: 'placement_client.allocation_request.invalid',
  /** Placement's REST endpoint did not answer at all (the message names the URL). Retryable. */
  placementUnreachable: 'placement_client.placement.unreachable',
} as const;

const SCHEDULER = {
  /** NoValidHost: the Failure carries the per-filter diagnosis. FAILED_PRECONDITION, expected. */
  noValidHost: 'scheduler.no_valid_host',
  invalidRequest: 'scheduler.request.invalid',
  invalidConfig: 'scheduler.config.invalid',
  /** A server group's lock was not had within its timeout. */
  groupLockTimeout: 'scheduler.group_lock.timeout',
} as const;

const SUPER_CONDUCTOR = {
  /** The broker refused the first build cast: no compute serves the chosen host (a fault's details). */
  buildUnroutable: 'super_conductor.build.unroutable',
  /** A handler named a cell this process has not opened (yet). Retryable. */
  cellNotOpen: 'super_conductor.cell.not_open',
  /** The broker refused a server action's cast to the instance's cell conductor (a fault's details). */
  actionUnroutable: 'super_conductor.action.unroutable',
  /** A server action the api gave up on before it was taken up (its intent expired): recorded as failed (a fault's details). */
  actionExpired: 'super_conductor.action.expired',
  /** A forced destination of a live migration failed Nova's conductor checks (the instance's own host, its compute down). */
  forcedHostRefused: 'super_conductor.action.forced_host_refused',
} as const;

const CELL_CONDUCTOR = {
  /** The broker refused a build cast: no compute serves that host (its failure for the request). */
  buildUnroutable: 'cell_conductor.build.unroutable',
  /** The watchdog: the build's host is gone (its compute service deleted or forced down). */
  buildHostGone: 'cell_conductor.build.host_gone',
  /** The watchdog: the build's deadline passed and its host is down. */
  buildHostDown: 'cell_conductor.build.host_down',
  /** The watchdog: no build result a build timeout after the deadline (lost in flight). */
  buildTimedOut: 'cell_conductor.build.timed_out',
  /** The allocation audit's placement knows none of the cell's compute nodes. */
  auditProvidersUnknown: 'cell_conductor.audit.providers_unknown',
  /** The broker refused an instance step cast: no compute serves that host (the step's failure). */
  stepUnroutable: 'cell_conductor.step.unroutable',
  /** The step watchdog: the step's host is gone (its compute service deleted or forced down). */
  stepHostGone: 'cell_conductor.step.host_gone',
  /** The step watchdog: no step result by the step's deadline. */
  stepTimedOut: 'cell_conductor.step.timed_out',
} as const;

const COMPUTE = {
  /** A reschedulable build failure (reported as `build_instances`). */
  buildRescheduled: 'compute.build.rescheduled',
  /** A non-reschedulable build failure (reported as `build_aborted`). */
  buildAborted: 'compute.build.aborted',
  /** A build cast to a host no compute process serves any more. */
  hostNotServed: 'compute.host.not_served',
  /** The cell conductor's queue does not exist on this bus yet. Retryable. */
  conductorUnroutable: 'compute.conductor.unroutable',
  /** A cast without a host in its routing key. */
  noHost: 'compute.no_host',
  /** An instance step failed on the host (InstanceStepResult.failure). */
  stepFailed: 'compute.step.failed',
} as const;

function deepFreeze<T extends Record<string, Record<string, string>>>(o: T): T {
  for (const group of Object.values(o)) Object.freeze(group);
  return Object.freeze(o);
}

/** Every published failure code, by the component that emits it. */
export const FAILURE_CODES = deepFreeze({
  grpc: GRPC,
  bus: BUS,
  placement: PLACEMENT,
  placementClient: PLACEMENT_CLIENT,
  scheduler: SCHEDULER,
  superConductor: SUPER_CONDUCTOR,
  cellConductor: CELL_CONDUCTOR,
  compute: COMPUTE,
});

type Codes = typeof FAILURE_CODES;
/** Any code of the registry. */
export type FailureCode = { [K in keyof Codes]: Codes[K][keyof Codes[K]] }[keyof Codes];

/** Every code of the registry, in declaration order. Pure. */
export function allFailureCodes(): FailureCode[] {
  return Object.values(FAILURE_CODES).flatMap((group) => Object.values(group) as FailureCode[]);
}

/** Optional parts of a {@link Failure}; `code` and `message` are always given. */
export interface FailureFields {
  retryable?: boolean;
  expected?: boolean;
  metadata?: Record<string, string>;
  diagnosis?: FilterDiagnosis[];
}

/** Builds a wire {@link Failure}. Codes follow `<service>.<noun>.<condition>` and never change once published. Pure. */
export function makeFailure(code: string, message: string, fields: FailureFields = {}): Failure {
  return {
    code,
    message,
    retryable: fields.retryable ?? false,
    expected: fields.expected ?? false,
    metadata: { ...(fields.metadata ?? {}) },
    diagnosis: [...(fields.diagnosis ?? [])],
  };
}
