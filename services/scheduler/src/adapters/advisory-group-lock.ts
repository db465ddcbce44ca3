import { FailureError, GrpcStatus } from '@cellsched/grpc';
import { FAILURE_CODES } from '@cellsched/wire';
import type { Pool } from 'pg';
import type { GroupLock } from '../ports';

/** Failure code when a group lock is not obtained in time (published: never changed). */
export const GROUP_LOCK_TIMEOUT = FAILURE_CODES.scheduler.groupLockTimeout;

/**
 * GroupLock as a PostgreSQL transaction-level advisory lock in the API database, keyed by a
 * 64-bit hash of the group uuid, so every scheduler replica serializes decisions for one group.
 *
 * `withLock` opens a transaction on its own connection, waits for the lock at most `timeoutMs`
 * (`lock_timeout`; past it: FailureError `scheduler.group_lock.timeout`, UNAVAILABLE, retryable,
 * nothing done), runs `fn`, and ends the transaction, which releases the lock whether `fn`
 * resolved or threw. A lost connection also releases it (PostgreSQL ends the session). Not
 * reentrant.
 *
 * Requests of one replica for the same group queue in process first (one waiter per group per
 * replica on PostgreSQL), and the pool given here must be used for nothing else: a holder's
 * reads (members, candidates) then never wait behind connections parked by lock waiters.
 */
export class AdvisoryGroupLock implements GroupLock {
  private readonly local = new Map<string, Promise<unknown>>();

  constructor(
    private readonly pool: Pool,
    private readonly timeoutMs: number,
  ) {}

  async withLock<T>(groupUuid: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.local.get(groupUuid) ?? Promise.resolve();
    const mine = previous.catch(() => undefined).then(() => this.withDbLock(groupUuid, fn));
    const tail = mine.catch(() => undefined);
    this.local.set(groupUuid, tail);
    try {
      return await mine;
    } finally {
      if (this.local.get(groupUuid) === tail) this.local.delete(groupUuid);
    }
  }

  private async withDbLock<T>(groupUuid: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(this.timeoutMs))}`);
      try {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended('cellsched.scheduler.group:' || $1, 0))", [groupUuid]);
      } catch (err) {
        if ((err as { code?: unknown }).code === '55P03') {
          throw FailureError.of(GROUP_LOCK_TIMEOUT, `server group ${groupUuid} is busy: lock not obtained in ${this.timeoutMs} ms`, {
            status: GrpcStatus.UNAVAILABLE,
            retryable: true,
          });
        }
        throw err;
      }
      return await fn();
    } finally {
      // NOTE: the transaction wrote nothing; ROLLBACK ends it and releases the lock. A connection
      // that cannot even roll back is destroyed rather than returned to the pool.
      let rollbackError: Error | undefined;
      await client.query('ROLLBACK').catch((e: unknown) => {
        rollbackError = e instanceof Error ? e : new Error(String(e));
      });
      client.release(rollbackError);
    }
  }
}
