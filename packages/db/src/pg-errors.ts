import { isConnectionError } from '@cellsched/connection-error';

/** SQLSTATE of a pg error (or anything with a string `code`), else undefined. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** 40001 serialization_failure and 40P01 deadlock_detected. */
const RETRYABLE_TX = new Set(['40001', '40P01']);

/**
 * True when PostgreSQL aborted the transaction only because of concurrency
 * (40001 serialization_failure, 40P01 deadlock_detected): rerunning the whole
 * transaction from BEGIN is safe and expected to succeed eventually.
 */
export function isRetryableTxError(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && RETRYABLE_TX.has(code);
}

/**
 * True when the statement failed because the connection to PostgreSQL was lost or could not be
 * made: the shared classification of `@cellsched/connection-error` (also the gRPC handlers'). The
 * caller may retry the whole unit of work after a pause, *if* that unit is idempotent.
 */
export { isConnectionError };
