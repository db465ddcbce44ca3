import { createHash } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';

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
  /**
   * Sends every statement that has parameters as a named prepared statement (default true), so
   * PostgreSQL parses and plans it once per connection instead of on every call. See
   * {@link preparedName}. Unset: on unless the environment says `CELLSCHED_PG_PREPARE=0`.
   */
  prepare?: boolean;
}

/** Distinct statement texts given a name at most: SQL built with inlined values would otherwise grow every connection's cache. */
export const MAX_PREPARED_TEXTS = 1000;
const preparedNames = new Map<string, string>();

/**
 * The prepared-statement name of a statement text (`cs_` and 24 hex digits of its SHA-1: the same
 * text has the same name in every connection, two texts never share one), or undefined once
 * {@link MAX_PREPARED_TEXTS} texts have a name (that text then goes unnamed: parsed per call).
 */
export function preparedName(text: string): string | undefined {
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED_TEXTS) {
    name = `cs_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return name;
}

type QueryFn = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Makes `client.query(text, values)` send a named prepared statement: the extended protocol's
 * Parse once per connection and statement, then Bind/Execute only (measured with pgbench on this
 * machine's PostgreSQL: a build-like transaction ran 1.6 times as many per second prepared, planned per call).
 * Each call is still planned for its values (the pool's connections run with plan_cache_mode
 * force_custom_plan). Statements without parameters (BEGIN, COMMIT, migrations' scripts) keep
 * the simple protocol.
 */
function prepareStatements(client: PoolClient): void {
  const query = client.query.bind(client) as QueryFn;
  (client as unknown as { query: QueryFn }).query = (config, values, callback) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = preparedName(config);
      if (name !== undefined) return query({ name, text: config, values }, callback);
    }
    return query(config, values, callback);
  };
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
  const prepare = opts.prepare ?? process.env.CELLSCHED_PG_PREPARE !== '0';
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName,
    statement_timeout: opts.statementTimeoutMs || undefined,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // NOTE: prepared, a statement would get PostgreSQL's generic plan after 5 calls when estimated no
    // worse: for our `($1 IS NULL OR col = $1)` filters that is a sequential scan (seen: listServices
    // by hosts over 10,000 services, the e2e bench 25% slower). Planned per call, parsed once.
    ...(prepare ? { options: '-c plan_cache_mode=force_custom_plan' } : {}),
  });
  const onIdleError =
    opts.onIdleError ?? ((err: Error) => process.emitWarning(`idle PostgreSQL connection lost: ${err.message}`, 'CellschedDbWarning'));
  pool.on('error', (err) => onIdleError(err));
  // NOTE: pg-pool removes its own error listener from a client while it is checked out, and a
  // pg Client emits 'error' when the server ends the session with no query in flight: with no
  // listener that is an uncaught exception (a PostgreSQL restart killed processes that held a
  // transaction open across an RPC). This one only keeps the process alive; the client is
  // already marked unqueryable, so the holder learns it from its next statement.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (prepare) prepareStatements(client);
  });
  return pool;
}
