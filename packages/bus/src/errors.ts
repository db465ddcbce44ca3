import { FAILURE_CODES } from '@cellsched/wire';

/**
 * Error codes of the bus (documented in the registry, `FAILURE_CODES.bus` of @cellsched/wire).
 * Callers branch on `code`, never on the message text; codes are never changed once published
 * (shared/STYLE.md).
 */
export const BUS_ERROR = FAILURE_CODES.bus;

export type BusErrorCode = (typeof BUS_ERROR)[keyof typeof BUS_ERROR];

/** An error raised by the bus itself; `retryable` says whether the same call may succeed later. */
export class BusError extends Error {
  override readonly name = 'BusError';
  constructor(
    readonly code: BusErrorCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * True when a cast was refused because no queue is bound to its routing key
 * (`bus.publish.unroutable`): nobody serves that server (a compute host no process simulates, a
 * cell without its conductor's queue). Nothing was queued. The conductors treat such a build cast
 * as that host's failure and such a terminate as done.
 */
export function isPublishUnroutable(err: unknown): err is BusError {
  return err instanceof BusError && err.code === BUS_ERROR.publishUnroutable;
}

/** The code, message and retryable flag of any thrown value, as recorded in dead-letter headers. */
export interface FailureSummary {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
}

/**
 * Summarises what a handler threw. An error carrying a string `code` (a `Failure`-shaped
 * error, or a BusError) keeps its code; `retryable: false` on it stops redelivery at once.
 * Anything else is `bus.handler.failed` and retryable.
 */
export function summarizeFailure(err: unknown): FailureSummary {
  if (err instanceof Error) {
    const fields = err as Error & { code?: unknown; retryable?: unknown };
    const code = typeof fields.code === 'string' && fields.code !== '' ? fields.code : BUS_ERROR.handlerFailed;
    return { code, message: err.message, retryable: fields.retryable !== false };
  }
  return { code: BUS_ERROR.handlerFailed, message: String(err), retryable: true };
}

/** The URL with its password removed, for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}
