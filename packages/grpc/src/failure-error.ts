import type { status } from '@grpc/grpc-js';
import { makeFailure, type Failure, type FailureFields } from '@cellsched/wire';

// NOTE: the Failure helpers live with the code registry in @cellsched/wire (domain cores build Failures without I/O imports)
export { makeFailure, type FailureFields };

/** Where a {@link FailureError} was seen by a client, filled in by the client helper. */
export interface FailureOrigin {
  /** The replica address of the last attempt. */
  address: string;
  /** The full gRPC method path, e.g. `/cellsched.v1.EchoService/Echo`. */
  method: string;
  /** How many attempts were made (1 when no retry happened). */
  attempts: number;
}

/**
 * An error that carries a wire {@link Failure} across a process boundary intact.
 *
 * Servers throw it from handlers; the server helper maps it to a gRPC status (or uses
 * `status` when the thrower picked one) and sends the encoded Failure in trailing metadata.
 * Clients receive it back with the same `code`, `retryable`, `metadata` and `diagnosis`.
 * Branch on `failure.code`, never on the message text.
 */
export class FailureError extends Error {
  override readonly name = 'FailureError';
  readonly failure: Failure;
  /** On the server: the status the thrower wants (optional). On the client: the status received. */
  readonly status: status | undefined;
  /** Set on errors returned by the client helper. */
  readonly origin: FailureOrigin | undefined;

  constructor(failure: Failure, options: { status?: status; origin?: FailureOrigin; cause?: unknown } = {}) {
    super(failure.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.failure = failure;
    this.status = options.status;
    this.origin = options.origin;
  }

  /** The stable failure code, e.g. `placement.concurrent_update`. */
  get code(): string {
    return this.failure.code;
  }

  /** Whether the same request may succeed if tried again. */
  get retryable(): boolean {
    return this.failure.retryable;
  }

  /** Shorthand for `new FailureError(makeFailure(code, message, fields), { status })`. */
  static of(code: string, message: string, fields: FailureFields & { status?: status } = {}): FailureError {
    const { status: wanted, ...rest } = fields;
    return new FailureError(makeFailure(code, message, rest), wanted === undefined ? {} : { status: wanted });
  }
}

/** True when `err` is a {@link FailureError} (also across duplicated module copies). */
export function isFailureError(err: unknown): err is FailureError {
  return err instanceof FailureError || (err instanceof Error && err.name === 'FailureError' && 'failure' in err);
}
