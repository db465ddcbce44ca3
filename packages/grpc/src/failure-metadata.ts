import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { Failure } from '@cellsched/wire';
import { FailureError, type FailureOrigin, makeFailure } from './failure-error';
import { statusName } from './status-map';

/** Trailing-metadata key that carries the encoded wire Failure (binary, hence `-bin`). */
export const FAILURE_METADATA_KEY = 'cellsched-failure-bin';

// Transport statuses worth another attempt when the call is idempotent.
const TRANSIENT = new Set<status>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.RESOURCE_EXHAUSTED]);

/** Trailing metadata holding `failure`. */
export function failureTrailers(failure: Failure): Metadata {
  const md = new Metadata();
  md.set(FAILURE_METADATA_KEY, Buffer.from(Failure.encode(failure).finish()));
  return md;
}

/** Decodes the Failure from trailers, or undefined when there is none or it does not decode. */
export function failureFromTrailers(md: Metadata | undefined): Failure | undefined {
  const value = md?.get(FAILURE_METADATA_KEY)[0];
  if (!Buffer.isBuffer(value)) return undefined;
  try {
    return Failure.decode(value);
  } catch {
    return undefined;
  }
}

/**
 * Turns a grpc-js error into a {@link FailureError}: the server's Failure when the trailers
 * carry one (code intact), otherwise a synthesized `grpc.<status>` Failure (for example
 * `grpc.unavailable`, `grpc.deadline_exceeded`) marked retryable for transient statuses.
 */
export function failureErrorFromServiceError(err: ServiceError, origin: FailureOrigin): FailureError {
  const carried = failureFromTrailers(err.metadata);
  if (carried) return new FailureError(carried, { status: err.code, origin, cause: err });
  const synthesized = makeFailure(`grpc.${statusName(err.code)}`, err.details || err.message, {
    retryable: TRANSIENT.has(err.code),
    expected: false,
    metadata: { address: origin.address, method: origin.method, grpc_status: String(err.code) },
  });
  return new FailureError(synthesized, { status: err.code, origin, cause: err });
}
