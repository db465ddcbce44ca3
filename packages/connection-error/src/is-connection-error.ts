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
 * The one classification of "the connection to a backing service was lost or could not be made"
 * (PostgreSQL restarting, a network error: SQLSTATE class 08, 57P01-03, 53300, a socket error
 * code, or the messages pg gives a session closed under it), as opposed to "the request is bad".
 * `@cellsched/db` retries idempotent units of work on it; `@cellsched/grpc` answers UNAVAILABLE
 * (retryable) for a handler that threw it. A COMMIT lost this way may or may not have been
 * applied, so only an idempotent unit may be rerun. Pure.
 */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('08') || CONNECTION_STATES.has(code) || SOCKET_CODES.has(code))) return true;
  const message = err instanceof Error ? err.message : '';
  return CONNECTION_MESSAGES.some((m) => message.includes(m));
}
