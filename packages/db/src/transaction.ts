import type { Pool, PoolClient } from 'pg';
import { isConnectionError, isRetryableTxError } from './pg-errors';

const ISOLATION_SQL = {
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE',
} as const;

export interface TxOptions {
  /** Default `read committed` (PostgreSQL's default). */
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  readOnly?: boolean;
  /** Total tries including the first, for 40001/40P01 only (default 5). */
  maxAttempts?: number;
  /** Called before each retry (e.g. to log `attempt` and the SQLSTATE). */
  onRetry?: (info: { attempt: number; error: unknown; delayMs: number }) => void;
}

/** Per-attempt context passed to the transaction body. */
export interface TxContext {
  readonly attempt: number;
}

/** Raised when COMMIT reports ROLLBACK: the body swallowed an error, nothing was written. */
export class TransactionAbortedError extends Error {
  readonly code = 'db.transaction.aborted';
  constructor() {
    super('transaction was aborted by an earlier error that the transaction body caught; nothing was committed');
    this.name = 'TransactionAbortedError';
  }
}

function beginSql(opts: TxOptions): string {
  const key = opts.isolation ?? 'read committed';
  if (!Object.hasOwn(ISOLATION_SQL, key)) throw new TypeError(`withTransaction: unknown isolation ${JSON.stringify(opts.isolation)}`);
  const isolation = ISOLATION_SQL[key];
  return `BEGIN ISOLATION LEVEL ${isolation}${opts.readOnly ? ' READ ONLY' : ' READ WRITE'}`;
}

/** Exponential backoff with jitter: 10, 20, 40... ms capped at 1 s, each scaled by [0.5, 1). */
function backoffMs(attempt: number): number {
  const base = Math.min(1000, 10 * 2 ** (attempt - 1));
  return Math.round(base * (0.5 + Math.random() / 2));
}

/** Rolls back; returns false if the connection is unusable (then it must be destroyed). */
async function rollback(client: PoolClient, cause: unknown): Promise<boolean> {
  if (isConnectionError(cause)) return false;
  try {
    await client.query('ROLLBACK');
    return true;
  } catch {
    return false;
  }
}

async function attemptOnce<T>(pool: Pool, fn: (c: PoolClient, ctx: TxContext) => Promise<T>, opts: TxOptions, attempt: number): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(beginSql(opts));
    const result = await fn(client, { attempt });
    const commit = await client.query('COMMIT');
    if (commit.command === 'ROLLBACK') throw new TransactionAbortedError();
    return result;
  } catch (err) {
    if (!(await rollback(client, err))) broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * Runs `fn` in one transaction on a pooled client: BEGIN (isolation, read only or not),
 * `fn`, COMMIT. On 40001 serialization_failure or 40P01 deadlock_detected, from any
 * statement including COMMIT, it rolls back and reruns `fn` from scratch after a
 * jittered backoff, up to `maxAttempts` tries in all; so `fn` must be safe to rerun
 * (no side effects outside the transaction). Other errors roll back and are rethrown
 * unchanged, without retry. The client is always released, and destroyed if the
 * connection broke. Connection errors are not retried here: a lost COMMIT is ambiguous.
 * Throws `TransactionAbortedError` (`db.transaction.aborted`) if `fn` swallowed an error
 * and PostgreSQL turned the COMMIT into a ROLLBACK.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient, ctx: TxContext) => Promise<T>,
  opts: TxOptions = {},
): Promise<T> {
  const maxAttempts = opts.maxAttempts ?? 5;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
    throw new TypeError(`withTransaction: maxAttempts must be an integer >= 1, got ${maxAttempts}`);
  beginSql(opts); // validate isolation before touching the pool
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptOnce(pool, fn, opts, attempt);
    } catch (err) {
      if (!isRetryableTxError(err) || attempt >= maxAttempts) throw err;
      const delayMs = backoffMs(attempt);
      opts.onRetry?.({ attempt, error: err, delayMs });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
