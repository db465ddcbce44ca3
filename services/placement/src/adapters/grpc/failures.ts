/**
 * Placement errors -> gRPC Failures (the codes callers branch on):
 * lost race -> ABORTED `placement.concurrent_update` (retryable);
 * no room / inventory constraints -> FAILED_PRECONDITION `placement.allocation.capacity_exceeded`
 * with the class and provider in metadata; a claim its server group's policy forbids ->
 * FAILED_PRECONDITION `placement.claim.group_policy` with the group, the compute node and a member
 * in metadata; bad input -> INVALID_ARGUMENT; unknown
 * provider -> NOT_FOUND. Anything else is rethrown (INTERNAL).
 */
import { FailureError, GrpcStatus } from '@cellsched/grpc';
import { FAILURE_CODES } from '@cellsched/wire';
import { CandidateQueryError } from '../../domain/candidates/errors';
import { ErrorCode, PlacementError } from '../../domain/errors';
import { AllocationConflict } from '../sql/allocation-writer';
import { GroupPolicyConflict } from '../sql/group-claim';

/** Failure code of a claim that does not fit. Published: never change. */
export const CAPACITY_EXCEEDED = FAILURE_CODES.placement.capacityExceeded;
/** Failure code of a claim its server group's policy forbids. Published: never change. */
export const GROUP_POLICY = FAILURE_CODES.placement.claimGroupPolicy;
/** Failure code of invalid input without a more specific Placement code. */
export const INVALID_REQUEST = FAILURE_CODES.placement.requestInvalid;

function fromPlacementError(err: PlacementError): FailureError {
  if (err instanceof GroupPolicyConflict) {
    const b = err.breach;
    return FailureError.of(GROUP_POLICY, err.detail, {
      status: GrpcStatus.FAILED_PRECONDITION,
      expected: true,
      retryable: false,
      metadata: {
        group_uuid: b.groupUuid,
        policy: b.policy,
        max_server_per_host: String(b.maxServerPerHost),
        resource_provider_uuid: b.rootProviderUuid,
        resource_provider_name: b.rootProviderName,
        member_uuid: b.memberUuid,
        members: String(b.members),
      },
    });
  }
  if (err instanceof AllocationConflict) {
    const { kind, resourceClass, providerUuid } = err.failure;
    return FailureError.of(CAPACITY_EXCEEDED, err.detail, {
      status: GrpcStatus.FAILED_PRECONDITION,
      expected: true,
      retryable: false,
      metadata: { reason: kind, resource_class: resourceClass, resource_provider_uuid: providerUuid },
    });
  }
  if (err.code === ErrorCode.CONCURRENT_UPDATE) {
    return FailureError.of(ErrorCode.CONCURRENT_UPDATE, err.detail, { status: GrpcStatus.ABORTED, expected: true, retryable: true });
  }
  if (err.status === 404) {
    return FailureError.of(ErrorCode.RESOURCE_PROVIDER_NOT_FOUND, err.detail, { status: GrpcStatus.NOT_FOUND, expected: true });
  }
  if (err.status === 400) {
    const code = err.code === ErrorCode.DEFAULT ? INVALID_REQUEST : err.code;
    return FailureError.of(code, err.detail, { status: GrpcStatus.INVALID_ARGUMENT, expected: true });
  }
  return FailureError.of(err.code, err.detail, { status: GrpcStatus.FAILED_PRECONDITION, expected: true });
}

/** Runs `fn`, translating Placement's expected errors into Failures. */
export async function withFailures<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof PlacementError) throw fromPlacementError(err);
    if (err instanceof CandidateQueryError) {
      throw FailureError.of(err.code ?? INVALID_REQUEST, err.message, { status: GrpcStatus.INVALID_ARGUMENT, expected: true });
    }
    throw err;
  }
}

/** INVALID_ARGUMENT for a malformed gRPC request. */
export function invalid(message: string): FailureError {
  return FailureError.of(INVALID_REQUEST, message, { status: GrpcStatus.INVALID_ARGUMENT, expected: true });
}
