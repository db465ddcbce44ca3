import { isConnectionError } from './pg-errors';

export interface ConnectionRetryOptions {
  /** Give up (rethrowing the last error) after this long; default 30 s. */
  timeoutMs?: number;
  /** Pause between tries; default 250 ms. */
  intervalMs?: number;
  /** Called before each retry, e.g. to log a warning. */
  onRetry?: (info: { attempt: number; error: unknown }) => void;
}

/**
 * Runs `fn`, and reruns it while it fails with a connection error (`isConnectionError`:
 * server restarting or unreachable) until `timeoutMs` has passed. Other errors are
 * rethrown at once. Only for idempotent work: when a connection dies during COMMIT the
 * transaction may have been applied, and `fn` runs again anyway.
 */
/**
 * A process's start-up step against its database (migrations, first cache load): retried
 * while PostgreSQL is restarting or unreachable, for up to two minutes, logging each
 * wait, so that a service started (or restarted) while the database is down comes up when
 * the database does, instead of exiting.
 */
export function atStartup<T>(
  what: string,
  fn: () => Promise<T>,
  log: { warn(obj: object, msg: string): void },
  timeoutMs = 120_000,
): Promise<T> {
  return withConnectionRetry(fn, {
    timeoutMs,
    intervalMs: 1_000,
    onRetry: ({ attempt, error }) => {
      log.warn({ attempt, err: error }, `${what}: database unreachable, retrying`);
    },
  });
}

export async function withConnectionRetry<T>(fn: () => Promise<T>, opts: ConnectionRetryOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isConnectionError(err) || Date.now() >= deadline) throw err;
      opts.onRetry?.({ attempt, error: err });
      await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 250));
    }
  }
}
