/**
 * Group commit for the gRPC Claim: claims that arrive while a batch is running are gathered and
 * sent together as ONE `placement_claim_many()` statement (migration 005): one round trip, one
 * transaction, one commit (one WAL flush) for all of them.
 *
 * Each claim stays individually all-or-nothing and is answered individually: the function runs
 * every claim in its own subtransaction, so a refused claim is rolled back alone (the others are
 * kept) and answered with the writer's error; a claim failing unexpectedly is answered with its
 * own error. Capacity is still checked in the database under the providers' row locks, and a
 * claim sees the claims before it in the batch (same transaction), so a batch decides exactly as
 * the same claims run one after another. The database stays the single source of truth.
 *
 * One batch at a time per process (the next one gathers meanwhile), so batches of this process
 * never deadlock each other; a deadlock with another writer (another placement process, a REST
 * write) or a serialization failure aborts the whole statement, nothing written, and the batch
 * runs again. No timer: an idle placement sends a lone claim at once (`placement_claim`, as
 * before); under load the batch is whatever arrived during the previous one (and the claims of
 * one ClaimMany call always go together).
 */
import { isRetryableTxError } from '@cellsched/db';
import type { Pool } from 'pg';
import {
  claimAllocations,
  claimRefs,
  claimRefusalError,
  claimRows,
  type ClaimOptions,
  type ConsumerAllocationsInput,
} from './allocation-writer';
import { CLAIM_MANY_IN_GROUPS_SQL, groupKeys } from './group-claim';

/** Most claims in one statement (each is a subtransaction; PostgreSQL caches 64 subtransaction ids per transaction). */
export const DEFAULT_CLAIM_BATCH_MAX = 32;

interface Pending {
  readonly input: ConsumerAllocationsInput;
  readonly opts: ClaimOptions;
  readonly resolve: (generation: number) => void;
  readonly reject: (err: unknown) => void;
}

interface BatchRow {
  i: number;
  generation: number | null;
  refusal: string | null;
  error_state: string | null;
  error_message: string | null;
}

/** Counters (observability and tests). */
export interface ClaimBatcherStats {
  claims: number;
  /** Statements sent: lone claims and batches. */
  statements: number;
  /** Batches of more than one claim, and the claims they carried. */
  batches: number;
  batchedClaims: number;
  largestBatch: number;
  /** Whole-batch reruns after a deadlock or serialization failure. */
  reruns: number;
}

/** An unexpected error of one claim of a batch, shaped like pg's errors (`code` = SQLSTATE). */
export class ClaimStatementError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ClaimStatementError';
  }
}

export class ClaimBatcher {
  private readonly queue: Pending[] = [];
  private running = false;
  readonly stats: ClaimBatcherStats = { claims: 0, statements: 0, batches: 0, batchedClaims: 0, largestBatch: 0, reruns: 0 };

  constructor(
    private readonly pool: Pool,
    private readonly maxBatch = DEFAULT_CLAIM_BATCH_MAX,
    private readonly maxAttempts = 5,
  ) {
    if (!(Number.isInteger(maxBatch) && maxBatch >= 1))
      throw new TypeError(`ClaimBatcher: maxBatch must be an integer >= 1 (got ${maxBatch})`);
  }

  /** `claimAllocations` for one consumer, possibly in a batch with others: the consumer's generation after the write, or the writer's error. */
  claim(input: ConsumerAllocationsInput, opts: ClaimOptions): Promise<number> {
    this.stats.claims += 1;
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ input, opts, resolve, reject });
      if (!this.running) {
        // NOTE: started after the current task's synchronous work, so claims queued together (ClaimMany) go together.
        this.running = true;
        queueMicrotask(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.stats.statements += 1;
        if (batch.length === 1) {
          const [one] = batch as [Pending];
          await claimAllocations(this.pool, one.input, { ...one.opts, maxAttempts: this.maxAttempts }).then(one.resolve, one.reject);
        } else {
          await this.runBatch(batch);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async runBatch(batch: readonly Pending[]): Promise<void> {
    this.stats.batches += 1;
    this.stats.batchedClaims += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    const claims = JSON.stringify(
      batch.map(({ input, opts }) => {
        const rows = claimRows(input);
        const refs = claimRefs(input);
        return {
          c: input.consumerUuid,
          p: refs.project,
          u: refs.user,
          t: refs.type,
          cg: opts.checkConsumerGeneration,
          g: input.consumerGeneration ?? null,
          rp: rows.map((r) => r.providerUuid),
          rc: rows.map((r) => r.rc),
          n: rows.map((r) => r.used),
          ...groupKeys(opts.group),
        };
      }),
    );
    // NOTE: a batch without any group runs the very statement it ran before migration 007.
    const statement = batch.some((p) => p.opts.group !== undefined)
      ? { name: 'placement.claim_many_in_groups', text: CLAIM_MANY_IN_GROUPS_SQL, values: [claims] }
      : {
          name: 'placement.claim_many',
          text: 'SELECT i, generation, refusal, error_state, error_message FROM placement_claim_many($1::jsonb)',
          values: [claims],
        };
    let rows: BatchRow[];
    for (let attempt = 1; ; attempt++) {
      try {
        rows = (await this.pool.query<BatchRow>(statement)).rows;
        break;
      } catch (err) {
        if (!isRetryableTxError(err) || attempt >= this.maxAttempts) {
          for (const p of batch) p.reject(err);
          return;
        }
        this.stats.reruns += 1;
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
      }
    }
    batch.forEach((p, index) => {
      const row = rows.find((r) => r.i === index + 1);
      if (row === undefined) p.reject(new Error(`placement_claim_many answered no row for claim ${index + 1}`));
      else if (row.generation !== null) p.resolve(row.generation);
      else if (row.refusal !== null) p.reject(claimRefusalError(row.refusal, p.input));
      else p.reject(new ClaimStatementError(row.error_state ?? 'XX000', row.error_message ?? 'placement_claim failed'));
    });
  }
}
