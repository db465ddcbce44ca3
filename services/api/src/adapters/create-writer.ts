/**
 * Group commit for server creates ({@link GroupCommit}): the records of creates that arrive while
 * a write is running are written together in ONE statement (`writeServerRecords`), one round
 * trip and one commit for all of them; an idle api writes a lone create at once.
 *
 * Each create is still all-or-nothing and answered on its own: its records are checked before
 * it joins a batch (bad input fails it alone, nothing written); if a batch's statement fails,
 * each of its creates is written again alone, so one create's failure (its rows refused by the
 * database) is never another's. The statement is idempotent, so writing a create twice is safe.
 */
import {
  checkServerRecords,
  writeServerRecords,
  type CheckedServerRecords,
  type NewServerRecord,
  type ServerRecordsOptions,
} from '@cellsched/api-db';
import { GroupCommit, type GroupCommitStats } from '@cellsched/db';
import type { Pool } from 'pg';

/** Most creates in one statement (a create of max_count servers counts once). */
export const DEFAULT_CREATE_BATCH_MAX = 64;

export class CreateWriter {
  private readonly commits: GroupCommit<CheckedServerRecords, void>;

  constructor(pool: Pool, maxBatch = DEFAULT_CREATE_BATCH_MAX) {
    this.commits = new GroupCommit<CheckedServerRecords, void>(
      async (creates) => {
        await writeServerRecords(pool, creates);
        return creates.map((): void => undefined);
      },
      { maxBatch },
    );
  }

  /** Counters: `writes` are creates. */
  get stats(): GroupCommitStats {
    return this.commits.stats;
  }

  /** `createServerRecords` for one create, possibly in one statement with others: resolves once its rows are committed. */
  write(servers: readonly NewServerRecord[], o: ServerRecordsOptions): Promise<void> {
    let records: CheckedServerRecords;
    try {
      records = checkServerRecords(servers, o);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.commits.write(records);
  }
}
