import { planCellChanges, type RefusedCell } from './cell-changes';
import type { CellMapping } from './cell-mappings';

/**
 * How a process opens and closes what it holds per cell (pools, a bus connection). `open` may
 * throw (a bus that does not answer): that cell is reported and tried again on the next
 * `apply`, the others are not held up. `close` should not throw; if it does, the cell is
 * dropped anyway and the error reported.
 */
export interface CellOpener<T> {
  open(mapping: CellMapping): Promise<T>;
  close(resource: T, mapping: CellMapping): Promise<void>;
}

/** One open cell: the mapping it was opened (or last updated) from, and what was opened. */
export interface OpenCell<T> {
  readonly mapping: CellMapping;
  readonly resource: T;
}

/** What one {@link CellSet.apply} did (the mappings concerned); `failed`: an open or close that threw. */
export interface CellSetReport {
  readonly added: readonly CellMapping[];
  readonly moved: readonly CellMapping[];
  readonly updated: readonly CellMapping[];
  readonly removed: readonly CellMapping[];
  readonly refused: readonly RefusedCell[];
  readonly failed: readonly { readonly mapping: CellMapping; readonly error: unknown }[];
}

/** Names (else uuids) of the mappings of a report's list, for logs. Pure. */
export function cellNames(mappings: readonly CellMapping[]): string[] {
  return mappings.map((m) => m.name ?? m.uuid);
}

/** True when a report changed nothing and found nothing wrong. Pure. */
export function isQuietReport(r: CellSetReport): boolean {
  return r.added.length + r.moved.length + r.updated.length + r.removed.length + r.refused.length + r.failed.length === 0;
}

/**
 * The cells a process holds open, kept in step with `cell_mappings`: `apply(mappings)` opens
 * new cells, reopens moved ones (new first, then the old is closed, so there is no gap),
 * takes renames and enable/disable without reconnecting, and closes cells whose mapping is
 * gone. One cell failing to open does not stop the others; it stays absent (or, when moved,
 * on its old connections) until an `apply` succeeds for it. Calls are serialized.
 */
export class CellSet<T> {
  private readonly open = new Map<string, OpenCell<T>>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opener: CellOpener<T>) {}

  /** The open cell with this uuid, or undefined. */
  get(uuid: string): OpenCell<T> | undefined {
    return this.open.get(uuid);
  }

  /** Every open cell, in no particular order. */
  list(): OpenCell<T>[] {
    return [...this.open.values()];
  }

  /** Brings the open cells in line with `mappings` (a fresh read of every cell mapping). Never throws. */
  apply(mappings: readonly CellMapping[]): Promise<CellSetReport> {
    const run = this.queue.then(() => this.applyNow(mappings));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Closes every open cell (at shutdown). Errors are swallowed: the process is going away. */
  async close(): Promise<void> {
    await this.queue;
    const all = this.list();
    this.open.clear();
    await Promise.all(all.map((c) => this.opener.close(c.resource, c.mapping).catch(() => undefined)));
  }

  private async applyNow(mappings: readonly CellMapping[]): Promise<CellSetReport> {
    const plan = planCellChanges(new Map(this.list().map((c) => [c.mapping.uuid, c.mapping])), mappings);
    const failed: { mapping: CellMapping; error: unknown }[] = [];
    for (const m of plan.updated) this.open.set(m.uuid, { mapping: m, resource: (this.open.get(m.uuid) as OpenCell<T>).resource });
    const closing: OpenCell<T>[] = [];
    for (const m of plan.removed) {
      closing.push(this.open.get(m.uuid) as OpenCell<T>);
      this.open.delete(m.uuid);
    }
    const opened = await Promise.allSettled([...plan.added, ...plan.moved].map(async (m) => ({ m, resource: await this.opener.open(m) })));
    const added: CellMapping[] = [];
    const moved: CellMapping[] = [];
    opened.forEach((r, i) => {
      const m = [...plan.added, ...plan.moved][i] as CellMapping;
      if (r.status === 'rejected') {
        failed.push({ mapping: m, error: r.reason });
        return;
      }
      const before = this.open.get(m.uuid);
      if (before !== undefined) closing.push(before);
      this.open.set(m.uuid, { mapping: m, resource: r.value.resource });
      (before === undefined ? added : moved).push(m);
    });
    await Promise.all(
      closing.map((c) =>
        this.opener.close(c.resource, c.mapping).catch((error: unknown) => {
          failed.push({ mapping: c.mapping, error });
        }),
      ),
    );
    return { added, moved, updated: plan.updated, removed: plan.removed, refused: plan.refused, failed };
  }
}
