/**
 * @cellsched/transient-retry: how the conductors ride out an unavailable dependency (placement,
 * a scheduler, PostgreSQL, a bus) within one delivery of a cast, instead of spending the bus's
 * bounded redeliveries in seconds. See README.md.
 */
export { isTransient, retryTransient, retryWhileTransient, type TransientRetryOptions } from './transient-retry';
