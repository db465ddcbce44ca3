/**
 * gRPC helpers: a server with health checks, graceful shutdown and Failure-to-status
 * mapping; a promise-based multi-replica client with deadlines and bounded retries; and
 * `x-request-id` propagation. See README.md for the design.
 */
export { FailureError, type FailureFields, type FailureOrigin, isFailureError, makeFailure } from './failure-error';
export { FAILURE_METADATA_KEY, failureErrorFromServiceError, failureFromTrailers, failureTrailers } from './failure-metadata';
export { statusForFailure, statusName } from './status-map';
export {
  REQUEST_ID_BAGGAGE_KEY,
  REQUEST_ID_METADATA_KEY,
  type RequestContext,
  currentRequestContext,
  newRequestId,
  runWithRequestContext,
} from './request-context';
export {
  type CallContext,
  failureForError,
  INTERNAL_FAILURE_CODE,
  type ServiceHandlers,
  UNAVAILABLE_FAILURE_CODE,
  type UnaryHandler,
  wrapUnary,
} from './handler';
export { type HealthCheckRequest, type HealthCheckResponse, HealthClient, HealthRegistry, HealthService, ServingStatus } from './health';
export { type GrpcServerOptions, type RunningGrpcServer, type ServiceBinding, bindService, startGrpcServer } from './server';
export {
  type GrpcClient,
  type GrpcClientConstructor,
  type GrpcClientOptions,
  type PromiseClient,
  type UnaryCallOptions,
  clientOptionProblems,
  createGrpcClient,
} from './client';
export type { RequestOf, ResponseOf, UnaryMethodKeys } from './types';
export { status as GrpcStatus } from '@grpc/grpc-js';
