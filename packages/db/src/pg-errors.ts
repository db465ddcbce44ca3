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

const CONNECTION_STATES = new Set([
  '57P01', // admin_shutdown: the server is stopping and closed our session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '53300', // too_many_connections
]);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);
const CONNECTION_MESSAGES = [
  'Connection terminated', // pg: socket closed under a query or while connecting
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect', // pg-pool connectionTimeoutMillis
];

/**
 * True when the statement failed because the connection to PostgreSQL was lost or
 * could not be made (server restarting, network error, class 08, 57P01-03): the caller
 * may retry the whole unit of work after a pause, *if* that unit is idempotent, since
 * a COMMIT lost this way may or may not have been applied.
 */
export function isConnectionError(err: unknown): boolean {
  const code = sqlState(err);
  if (code !== undefined && (code.startsWith('08') || CONNECTION_STATES.has(code) || SOCKET_CODES.has(code))) return true;
  const message = err instanceof Error ? err.message : '';
  return CONNECTION_MESSAGES.some((m) => message.includes(m));
}
