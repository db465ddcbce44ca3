/** What the audit knows about one consumer found on one of the cell's providers. */
export interface ConsumerOnProvider {
  readonly consumerUuid: string;
  readonly providerUuid: string;
  /** The instance row, if the cell DB has one (deleted rows included). */
  readonly instance: { readonly vmState: string; readonly node: string | null; readonly deleted: boolean; readonly computeNodeUuid: string | undefined } | undefined;
  /** True when a migration of this cell uses this uuid as its consumer. */
  readonly isMigration: boolean;
}

export type AuditVerdict = 'ok' | 'leak' | 'unknown';

/**
 * Classifies an allocation on a provider of this cell. Pure.
 * - `ok`: a live instance holding resources (building or running) on its own node, or a migration;
 * - `leak`: a deleted instance, or one in ERROR (our builds release before ERROR), or a live
 *   instance whose node is another provider (a retry that did not clean up);
 * - `unknown`: no such instance in this cell (maybe the super-conductor claimed and has not
 *   created it yet): a leak only if it is still there after the grace period.
 */
export function classifyAllocation(c: ConsumerOnProvider): AuditVerdict {
  if (c.isMigration) return 'ok';
  const i = c.instance;
  if (i === undefined) return 'unknown';
  if (i.deleted || i.vmState === 'deleted' || i.vmState === 'error') return 'leak';
  if (i.computeNodeUuid !== undefined && i.computeNodeUuid !== c.providerUuid) return i.vmState === 'building' ? 'unknown' : 'leak';
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
