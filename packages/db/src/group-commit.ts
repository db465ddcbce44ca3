/**
 * Group commit: writes that arrive while one is running are gathered and sent together as ONE
 * statement, one round trip and one commit (one WAL flush) for all of them. No timer: an idle
 * process sends a lone write at once; under load a batch is whatever arrived during the
 * previous statement, so batches grow with the load and a write waits at most one statement
 * more. One statement at a time per GroupCommit, so its batches never deadlock each other.
 *
 * Each write is still answered on its own. If a batch's statement fails, each of its writes is
 * sent again alone (`onBatchError: 'each-alone'`, the default), so one write's failure (its row
 * refused by the database) is never another's: the statement must be idempotent (a write sent
 * twice changes nothing more), and for a batch of N writes must answer N results in the same
 * order. Where a write's answer depends on whether it was already applied (a statement whose
 * commit was lost with its connection would answer "nothing to do" when sent again), use
 * `'all-fail'`: every write of a failed batch gets its error, as a lone statement's caller
 * would. A `check` refuses bad input before the write joins a batch. Placement's ClaimBatcher is
 * the same idea with per-claim subtransactions instead of the fallback.
 *
 * Tracing: a batch's statement runs in the async context of its first write, so its span is in
 * that write's trace (not in the trace of whichever write started the drain long before).
 */
import { AsyncResource } from 'node:async_hooks';

/** Counters (observability and tests). */
export interface GroupCommitStats {
  writes: number;
  /** Statements sent: lone writes, batches, and the fallbacks' lone writes. */
  statements: number;
  /** Batches of more than one write, and the writes they carried. */
  batches: number;
  batchedWrites: number;
  largestBatch: number;
  /** Batches whose statement failed, each write then sent alone ('each-alone'). */
  fallbacks: number;
}

interface Pending<I, O> {
  readonly item: I;
  /** The writer's async context: a batch's statement runs in its first write's (its trace's span). */
  readonly scope: AsyncResource;
  readonly resolve: (out: O) => void;
  readonly reject: (err: unknown) => void;
}

export class GroupCommit<I, O> {
  private readonly queue: Pending<I, O>[] = [];
  private running = false;
  readonly stats: GroupCommitStats = { writes: 0, statements: 0, batches: 0, batchedWrites: 0, largestBatch: 0, fallbacks: 0 };

  private readonly maxBatch: number;
  private readonly onBatchError: 'each-alone' | 'all-fail';
  private readonly check: ((item: I) => void) | undefined;

  /** `run` sends one statement for `items` and answers one result per item, in order. */
  constructor(
    private readonly run: (items: readonly I[]) => Promise<readonly O[]>,
    opts: {
      readonly maxBatch?: number;
      readonly onBatchError?: 'each-alone' | 'all-fail';
      /** Throws on an item the statement would refuse (bad input): that write fails alone, before it joins a batch. */
      readonly check?: (item: I) => void;
    } = {},
  ) {
    const maxBatch = opts.maxBatch ?? 64;
    this.check = opts.check;
    this.maxBatch = maxBatch;
    this.onBatchError = opts.onBatchError ?? 'each-alone';
    if (!(Number.isInteger(maxBatch) && maxBatch >= 1))
      throw new TypeError(`GroupCommit: maxBatch must be an integer >= 1 (got ${maxBatch})`);
  }

  /** Sends `item`, possibly in one statement with others: its result once committed, or its error. */
  write(item: I): Promise<O> {
    try {
      this.check?.(item);
    } catch (err) {
      return Promise.reject(err);
    }
    this.stats.writes += 1;
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, scope: new AsyncResource('GroupCommit.write'), resolve, reject });
      if (!this.running) {
        // NOTE: started after the current task's synchronous work, so writes queued together go together.
        this.running = true;
        queueMicrotask(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        if (batch.length > 1) {
          this.stats.batches += 1;
          this.stats.batchedWrites += batch.length;
          this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
        }
        let results: readonly O[];
        try {
          results = await this.send(batch);
        } catch (err) {
          if (batch.length === 1 || this.onBatchError === 'all-fail') for (const p of batch) p.reject(err);
          else await this.oneByOne(batch);
          continue;
        }
        batch.forEach((p, i) => p.resolve(results[i] as O));
      }
    } finally {
      this.running = false;
    }
  }

  private async oneByOne(batch: readonly Pending<I, O>[]): Promise<void> {
    this.stats.fallbacks += 1;
    for (const p of batch) await this.send([p]).then((r) => p.resolve(r[0] as O), p.reject);
  }

  private async send(batch: readonly Pending<I, O>[]): Promise<readonly O[]> {
    this.stats.statements += 1;
    const items = batch.map((p) => p.item);
    const results = await (batch[0] as Pending<I, O>).scope.runInAsyncScope(() => this.run(items));
    if (results.length !== batch.length) throw new Error(`GroupCommit: ${batch.length} writes answered ${results.length} results`);
    return results;
  }
}
