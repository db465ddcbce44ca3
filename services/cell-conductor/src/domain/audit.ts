/** What the audit knows about one consumer found on one of the cell's providers. */
export interface ConsumerOnProvider {
  readonly consumerUuid: string;
  readonly providerUuid: string;
  /** The instance row, if the cell DB has one (deleted rows included). */
  readonly instance:
    | {
        readonly vmState: string;
        readonly node: string | null;
        readonly deleted: boolean;
        readonly computeNodeUuid: string | undefined;
        /** Providers of its migrations in progress (their source and destination nodes): a move holds both. */
        readonly moveProviders?: readonly string[];
        /** Its latest migration failed (`error`): a failed move leaves it in ERROR on its host, holding its allocation there (as Nova). */
        readonly failedMove?: boolean;
      }
    | undefined;
  /** True when a migration of this cell uses this uuid as its consumer. */
  readonly isMigration: boolean;
  /** That migration's status. */
  readonly migrationStatus?: string;
}

/** Migration statuses that are over: their consumer must hold nothing (confirm, revert, live migration done, failure). */
const MIGRATION_OVER = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled']);

export type AuditVerdict = 'ok' | 'leak' | 'unknown';

/**
 * Classifies an allocation on a provider of this cell. Pure.
 * - `ok`: a live instance holding resources on its own node or on a node of its move in progress,
 *   or a migration not over (a move in progress, VERIFY_RESIZE, an evacuation `done` until its
 *   source is cleaned);
 * - `leak`: a deleted instance, one in ERROR (our builds release before ERROR; a failed move's
 *   ERROR keeps only its own node), a live instance whose node is another provider (a retry that
 *   did not clean up), a migration that is over (confirmed, reverted, completed, error);
 * - `unknown`: no such instance in this cell (maybe the super-conductor claimed and has not
 *   created it yet), or one the scheduler is placing (a build retry, an unshelve not started):
 *   a leak only if it is still there after the grace period.
 */
export function classifyAllocation(c: ConsumerOnProvider): AuditVerdict {
  if (c.isMigration) return c.migrationStatus !== undefined && MIGRATION_OVER.has(c.migrationStatus) ? 'leak' : 'ok';
  const i = c.instance;
  if (i === undefined) return 'unknown';
  if (i.deleted || i.vmState === 'deleted') return 'leak';
  const own = i.computeNodeUuid === c.providerUuid;
  if (i.vmState === 'error') return i.failedMove === true && own ? 'ok' : 'leak';
  if (i.moveProviders?.includes(c.providerUuid) === true) return 'ok';
  if (i.computeNodeUuid === undefined) return i.vmState === 'shelved_offloaded' ? 'unknown' : 'ok';
  if (!own) return i.vmState === 'building' ? 'unknown' : 'leak';
  return 'ok';
}

/**
 * Remembers suspicious consumers between passes: a consumer is healed only when it was
 * suspicious in a pass at least `graceMs` earlier too (claims in flight are not leaks). Pure state.
 */
export class LeakTracker {
  private readonly firstSeen = new Map<string, number>();

  constructor(private readonly graceMs: number) {}

  /** Records this pass's suspects; returns those to heal now. Suspects that went away are forgotten. */
  pass(suspects: readonly string[], now: number): string[] {
    const current = new Set(suspects);
    for (const k of [...this.firstSeen.keys()]) if (!current.has(k)) this.firstSeen.delete(k);
    const due: string[] = [];
    for (const k of current) {
      const first = this.firstSeen.get(k);
      if (first === undefined) this.firstSeen.set(k, now);
      else if (now - first >= this.graceMs) due.push(k);
    }
    for (const k of due) this.firstSeen.delete(k);
    return due;
  }
}
