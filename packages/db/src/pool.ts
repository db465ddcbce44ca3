import { Pool } from 'pg';

export interface PoolOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Maximum connections (default 10). */
  max?: number;
  /** Shown in `pg_stat_activity.application_name` (e.g. `placement`). */
  applicationName?: string;
  /** Server-side `statement_timeout` for every statement (0 or unset: none). */
  statementTimeoutMs?: number;
  /** How long `pool.connect()` waits for a connection before failing (default 10 s). */
  connectionTimeoutMs?: number;
  /**
   * Told about errors of idle connections (for instance the server restarted). Default:
   * a process warning. Those connections are already gone from the pool; nothing to do.
   */
  onIdleError?: (err: Error) => void;
}

/**
 * Creates a `pg.Pool` with an `error` listener, so an idle connection that dies
 * (server restart, network cut) never crashes the process: pg-pool discards it and
 * opens a new one on the next `connect()`. A checked-out connection that dies between two
 * statements (the server's FATAL arrives while its holder awaits something else, e.g. a
 * transaction holding a row lock across an RPC) does not crash it either: its holder's
 * next statement fails with a connection error and pg-pool discards it on release. A pool therefore survives a PostgreSQL
 * restart by itself; statements in flight at that moment fail (see `isConnectionError`)
 * and callers retry idempotent work. Validates options and throws `TypeError` on bad ones.
 */
export function createPool(opts: PoolOptions): Pool {
  if (typeof opts.url !== 'string' || !URL.canParse(opts.url)) throw new TypeError('createPool: url must be a postgres URL');
  for (const key of ['max', 'statementTimeoutMs', 'connectionTimeoutMs'] as const) {
    const v = opts[key];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < (key === 'max' ? 1 : 0))) {
      throw new TypeError(`createPool: ${key} must be a ${key === 'max' ? 'positive' : 'non-negative'} integer, got ${v}`);
    }
  }
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName,
    statement_timeout: opts.statementTimeoutMs || undefined,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
  });
  const onIdleError = opts.onIdleError ?? ((err: Error) => process.emitWarning(`idle PostgreSQL connection lost: ${err.message}`, 'CellschedDbWarning'));
  pool.on('error', (err) => onIdleError(err));
  // NOTE: pg-pool removes its own error listener from a client while it is checked out, and a
  // pg Client emits 'error' when the server ends the session with no query in flight: with no
  // listener that is an uncaught exception (a PostgreSQL restart killed processes that held a
  // transaction open across an RPC). This one only keeps the process alive; the client is
  // already marked unqueryable, so the holder learns it from its next statement.
  pool.on('connect', (client) => { client.on('error', () => {}); });
  return pool;
}
