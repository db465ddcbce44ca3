// `placement audit`'s judgement (Nova's PlacementCommands.audit, nova/cmd/manage.py): is an
// allocation on a resource provider held by something that still needs it? Pure.

/** Resource classes whose allocations are Nova's (as Nova's audit: a consumer with any of them is judged). */
export const NOVA_RESOURCE_CLASSES: readonly string[] = Object.freeze([
  'VCPU',
  'MEMORY_MB',
  'DISK_GB',
  'VGPU',
  'NET_BW_EGR_KILOBIT_PER_SEC',
  'NET_BW_IGR_KILOBIT_PER_SEC',
  'PCPU',
  'MEM_ENCRYPTION_CONTEXT',
]);

/**
 * Nova's final migration statuses: every other status is in progress (MigrationList.get_in_progress_*).
 * Not 'done', unlike Nova: an evacuation is 'done' once rebuilt on its destination, and its
 * migration consumer keeps the source's allocation until the source is heard from again and gives
 * its copy up ('completed'); Nova keeps that allocation on the instance consumer instead.
 */
const FINAL_MIGRATION_STATUSES = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled']);

/** The compute node a provider tree belongs to (its root provider's uuid is the node's uuid). */
export interface NodeRef {
  readonly cellUuid: string;
  readonly host: string;
  readonly hypervisorHostname: string;
}

/** One instance row of a cell (cell0 included); deleted rows too. */
export interface InstanceFact {
  readonly cellUuid: string;
  readonly cellName: string;
  readonly vmState: string;
  readonly host: string | null;
  readonly node: string | null;
  readonly deleted: boolean;
  /** It was ACTIVE once (launched_at set): an ERROR instance that had launched (a failed move's rollback) still holds its host's resources. */
  readonly launched?: boolean;
}

/** One migration row of a cell. */
export interface MigrationFact {
  readonly uuid: string;
  readonly instanceUuid: string;
  readonly status: string;
  readonly sourceCompute: string | null;
  readonly sourceNode: string | null;
  readonly destCompute: string | null;
  readonly destNode: string | null;
}

/** Everything the cloud knows about one consumer uuid, gathered over the API DB and every cell. */
export interface ConsumerFacts {
  /** Instance rows with this uuid in any cell or cell0 (normally one). */
  readonly instances: readonly InstanceFact[];
  /** The migration whose own uuid is this consumer (a move's source allocation), if any. */
  readonly migration: MigrationFact | undefined;
  /** Migrations of the instance with this uuid. */
  readonly instanceMigrations: readonly MigrationFact[];
  /** A build request exists: claimed by the scheduler, not yet created in a cell. */
  readonly buildRequest: boolean;
}

/**
 * Why an allocation is orphaned:
 * - `no_consumer`: no instance in any cell (cell0 included), no migration, no build request (Nova's case);
 * - `instance_deleted`: only deleted instance rows (Nova: not on the node's instance list);
 * - `not_on_node`: a live instance that is not on this provider's compute node, with no move in
 *   progress to or from it (Nova's per-node check); a provider with no compute node counts here;
 * - `migration_finished`: a migration consumer whose move has ended (Nova: not an active migration);
 * - `instance_error`: beyond Nova — an ERROR instance that never launched holds nothing here (a
 *   build releases its claim before ERROR; a NoValidHost never had one), so its allocation is a
 *   leak; one that had launched (a move that failed and could not be rolled back leaves it on its
 *   host) is judged like a live instance, by its node.
 */
export type OrphanReason = 'no_consumer' | 'instance_deleted' | 'not_on_node' | 'migration_finished' | 'instance_error';

const isInProgress = (m: MigrationFact): boolean => !FINAL_MIGRATION_STATUSES.has(m.status);
const atNode = (host: string | null, node: string | null, n: NodeRef): boolean =>
  host === n.host && (node ?? host) === n.hypervisorHostname;

/** Whether a consumer's resources on one provider include any of Nova's classes (others are not judged, as in Nova). */
export function isNovaAllocation(resources: Readonly<Record<string, number>>): boolean {
  return Object.keys(resources).some((rc) => NOVA_RESOURCE_CLASSES.includes(rc));
}

/**
 * Judges one consumer's allocation on a provider whose compute node is `node` (undefined: no
 * compute node in any cell has that uuid). Returns why it is orphaned, or undefined when it is
 * held by something alive. Conservative where a build is in flight: a `building` instance or a
 * build request may hold a claim anywhere (the in-cell retry moves a claim before the row).
 */
export function judgeAllocation(node: NodeRef | undefined, facts: ConsumerFacts): OrphanReason | undefined {
  if (facts.migration !== undefined) return isInProgress(facts.migration) ? undefined : 'migration_finished';
  const live = facts.instances.find((i) => !i.deleted && i.vmState !== 'deleted');
  if (live === undefined) {
    if (facts.instances.length > 0) return 'instance_deleted';
    return facts.buildRequest ? undefined : 'no_consumer';
  }
  if (live.vmState === 'error' && live.launched !== true) return 'instance_error';
  if (live.vmState === 'building') return undefined;
  if (node === undefined) return 'not_on_node';
  if (live.cellUuid === node.cellUuid && atNode(live.host, live.node, node)) return undefined;
  const moving = facts.instanceMigrations.some(
    (m) => isInProgress(m) && (atNode(m.sourceCompute, m.sourceNode, node) || atNode(m.destCompute, m.destNode, node)),
  );
  return moving ? undefined : 'not_on_node';
}

/** Nova's sentence for an orphaned consumer, with the reason beyond Nova's wording when it is not Nova's case. */
export function describeOrphan(consumerUuid: string, reason: OrphanReason, facts: ConsumerFacts): string {
  const head = `Allocations were set against consumer UUID ${consumerUuid} but`;
  const live = facts.instances.find((i) => !i.deleted && i.vmState !== 'deleted');
  switch (reason) {
    case 'no_consumer':
      return `${head} no existing instances or active migrations are related. `;
    case 'instance_deleted':
      return `${head} the instance is deleted (${facts.instances.map((i) => i.cellName).join(', ')}).`;
    case 'instance_error':
      return `${head} the instance is in ERROR in ${live?.cellName ?? '?'} (an ERROR instance holds no resources).`;
    case 'migration_finished':
      return `${head} its migration is ${facts.migration?.status ?? '?'}.`;
    case 'not_on_node':
      return `${head} the instance is ${live?.vmState ?? '?'} on ${live?.node ?? live?.host ?? 'no host'} in ${live?.cellName ?? '?'}, with no move to or from this provider in progress.`;
  }
}

/** Python's repr of a resources dict, as Nova prints it: `{'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1}`. */
export function formatResources(resources: Readonly<Record<string, number>>): string {
  return `{${Object.keys(resources)
    .sort()
    .map((rc) => `'${rc}': ${resources[rc] ?? 0}`)
    .join(', ')}}`;
}
