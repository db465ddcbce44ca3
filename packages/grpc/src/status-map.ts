import { status } from '@grpc/grpc-js';
import { FAILURE_CODES, type Failure } from '@cellsched/wire';

// NOTE: full codes first: a few published codes do not end in a generic condition.
const BY_CODE: ReadonlyMap<string, status> = new Map([
  [FAILURE_CODES.placement.concurrentUpdate, status.ABORTED],
  [FAILURE_CODES.scheduler.noValidHost, status.FAILED_PRECONDITION],
  [FAILURE_CODES.placement.undefinedCode, status.UNKNOWN],
]);

// The `<condition>` part of `<service>.<noun>.<condition>`, the last dot-separated segment.
// Placement's own codes (placement.inventory.inuse, placement.query.bad_value, ...) fit this.
const BY_CONDITION: ReadonlyMap<string, status> = new Map([
  ['not_found', status.NOT_FOUND],
  ['invalid', status.INVALID_ARGUMENT],
  ['bad_value', status.INVALID_ARGUMENT],
  ['missing_value', status.INVALID_ARGUMENT],
  ['duplicate_key', status.INVALID_ARGUMENT],
  ['bad_request', status.INVALID_ARGUMENT],
  ['already_exists', status.ALREADY_EXISTS],
  ['duplicate_name', status.ALREADY_EXISTS],
  ['concurrent_update', status.ABORTED],
  ['conflict', status.ABORTED],
  ['no_capacity', status.FAILED_PRECONDITION],
  ['no_valid_host', status.FAILED_PRECONDITION],
  ['inuse', status.FAILED_PRECONDITION],
  ['cannot_delete_parent', status.FAILED_PRECONDITION],
  ['unsupported_version', status.FAILED_PRECONDITION],
  ['forbidden', status.PERMISSION_DENIED],
  ['unauthorized', status.UNAUTHENTICATED],
  ['unavailable', status.UNAVAILABLE],
  ['timeout', status.DEADLINE_EXCEEDED],
  ['not_implemented', status.UNIMPLEMENTED],
]);

/**
 * The gRPC status a Failure travels with when its thrower did not pick one.
 * Known codes first, then the code's condition segment; otherwise an expected
 * failure is FAILED_PRECONDITION and an unexpected one INTERNAL. The status is only a
 * transport hint: clients branch on the Failure code carried in the trailers.
 */
export function statusForFailure(failure: Failure): status {
  const exact = BY_CODE.get(failure.code);
  if (exact !== undefined) return exact;
  const condition = failure.code.slice(failure.code.lastIndexOf('.') + 1);
  const byCondition = BY_CONDITION.get(condition);
  if (byCondition !== undefined) return byCondition;
  return failure.expected ? status.FAILED_PRECONDITION : status.INTERNAL;
}

/** `DEADLINE_EXCEEDED` → `deadline_exceeded`, for synthesized `grpc.<status>` codes. */
export function statusName(code: status): string {
  const name = status[code] as string | undefined;
  return (name ?? `status_${String(code)}`).toLowerCase();
}
