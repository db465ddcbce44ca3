/**
 * @cellsched/bus: RabbitMQ casts typed by the proto service definitions.
 * At-least-once delivery: handlers must be idempotent. See README.md.
 */
export { Bus, type BusOptions, type CastHandlers, type ServeOptions } from './bus';
export { CastClient, type CastOptions, type CastReceipt } from './cast-client';
export type { CastContext, CastHandler } from './delivery';
export type { CastServiceDefinition, RequestOf } from './definitions';
export type { CastSubscription } from './subscription';
export { BUS_ERROR, BusError, isPublishUnroutable, summarizeFailure, type BusErrorCode, type FailureSummary } from './errors';
export { HEADER, toSnakeCase } from './headers';
export { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff';
export { activeTraceParent, withSavedTrace } from './tracing';
