import {
  findMigrations,
  listComputeNodes,
  listInstanceHoldings,
  listPendingProviders,
  MIGRATION_FINAL_STATUSES,
  type ComputeNodeRecord,
  type InstanceHolding,
  type MigrationRecord,
} from '@cellsched/cell-db';
import { instanceConsumer, type PlacementClient } from '@cellsched/placement-client';
import { FAILURE_CODES } from '@cellsched/wire';
import type { Pool } from 'pg';
import { classifyAllocation, LeakTracker, type AuditVerdict } from '../domain/audit';

/** One healed allocation: the consumer, the provider it no longer holds, and why. */
export interface HealedAllocation {
  readonly consumerUuid: string;
  readonly providerUuid: string;
  readonly reason: AuditVerdict;
}

/** What one audit pass saw and did. */
export interface AuditReport {
  /** Providers read: the live compute nodes' and the retired ones still queued for deletion. */
  readonly providers: number;
  readonly allocations: number;
  /** Suspicious allocations still within their grace period. */
  readonly suspects: number;
  readonly healed: readonly HealedAllocation[];
  /** Instances holding resources (building, active, stopped, resized) with no allocation in placement: reported, not healed. */
  readonly missing: readonly string[];
  /** This cell's compute nodes placement has no provider for (registering, or deleted). */
  readonly unknownProviders: number;
}

type Seen = { consumer: string; provider: string };

/**
 * Placement knows none of this cell's compute nodes, so nothing can be judged
 * (`cell_conductor.audit.providers_unknown`): CELLSCHED_PLACEMENT_URL names another system's
 * placement (a port offset not passed on), or placement's data was reset under the cell.
 */
export class AuditProvidersUnknownError extends Error {
  readonly code = FAILURE_CODES.cellConductor.auditProvidersUnknown;
  constructor(nodes: number, baseUrl: string) {
    super(`placement at ${baseUrl} has no resource provider for any of this cell's ${nodes} compute nodes: is it this system's placement?`);
    this.name = 'AuditProvidersUnknownError';
  }
}

/** A compute node's uuid by (host, node); the first of `nodes` with that pair wins (live nodes come first). */
type NodeIndex = (i: { readonly host: string | null; readonly node: string | null }) => string | undefined;

// NOTE: a map, not a scan of the nodes per allocation: a pass judges every allocation of the cell
// (tens of thousands under load, against 5,000 nodes at 10,000 hosts), and a scan each was seconds
// of the conductor's event loop, which every build waiting on this conductor waited out (e2e bench).
function nodeIndex(nodes: readonly ComputeNodeRecord[]): NodeIndex {
  const byPair = new Map<string, string>();
  for (const n of nodes) {
    const key = `${n.host}\u0000${n.hypervisorHostname}`;
    if (!byPair.has(key)) byPair.set(key, n.uuid);
  }
  return (i) => (i.host === null ? undefined : byPair.get(`${i.host}\u0000${i.node ?? i.host}`));
}

/** What an instance's migrations (oldest first) say about where it may hold resources: the nodes of those in progress, a failed last one. */
function moveOf(nodeUuidOf: NodeIndex, ms: readonly MigrationRecord[]): { moveProviders: string[]; failedMove: boolean } {
  const moveProviders = ms
    .filter((m) => !MIGRATION_FINAL_STATUSES.includes(m.status))
    .flatMap((m) => [nodeUuidOf({ host: m.sourceCompute, node: m.sourceNode }), nodeUuidOf({ host: m.destCompute, node: m.destNode })])
    .filter((u): u is string => u !== undefined);
  return { moveProviders, failedMove: ms.at(-1)?.status === 'error' };
}

/** The compute nodes whose providers one pass reads. */
interface AuditedNodes {
  /** The cell's live nodes. Placement knowing none of them fails the pass. */
  readonly live: readonly ComputeNodeRecord[];
  /** Retired nodes (soft-deleted) whose providers are still queued for deletion; placement may have deleted them already. */
  readonly retired: readonly ComputeNodeRecord[];
}

/**
 * The cell's live compute nodes, and the retired ones whose providers are still queued for
 * deletion (`compute_processes.pending_providers`): a retired host's provider is kept,
 * COMPUTE_STATUS_DISABLED, while the instances still there hold allocations on it, so those
 * allocations are judged too (else an ACTIVE instance there would look `missing`, and a deleted
 * one's allocation there would never be healed, keeping the provider forever).
 */
async function auditedNodes(pool: Pool): Promise<AuditedNodes> {
  const live = await listComputeNodes(pool);
  const liveUuids = new Set(live.map((n) => n.uuid));
  const pending = [...new Set([...(await listPendingProviders(pool)).values()].flat())].filter((u) => !liveUuids.has(u));
  const retired = pending.length === 0 ? [] : await listComputeNodes(pool, { uuids: pending, includeDeleted: true });
  return { live, retired: retired.filter((n) => n.deletedAt !== null) };
}

/**
 * Beyond Nova: compares placement's allocations on this cell's providers (its live compute
 * nodes', and its retired nodes' still queued for deletion) with the cell DB and heals leaks (a deleted or ERROR instance still holding resources, a consumer no
 * instance of this cell knows, an allocation on a provider the instance is not on). A
 * suspect is healed only if a later pass, at least `graceMs` after the first, still finds
 * it (claims in flight are not leaks), and only after re-reading it. Healing rewrites the
 * consumer without the leaked providers (replace-claim) or releases it when nothing is left.
 */
export class AllocationAudit {
  private readonly tracker: LeakTracker;

  constructor(
    private readonly pool: Pool,
    private readonly placement: PlacementClient,
    private readonly graceMs: number,
    private readonly placementUrl = '(placement)',
  ) {
    this.tracker = new LeakTracker(graceMs);
  }

  /**
   * Every consumer on the cell's providers; throws {@link AuditProvidersUnknownError} when placement
   * knows none of the live nodes and at least one of them is older than the grace period. NOTE: a
   * node younger than that may be registering (its row written, its provider not yet: seen in e2e
   * as a pass racing the first `report_compute_hosts`); a cell of such nodes only does not fail.
   */
  private async gather({ live, retired }: AuditedNodes): Promise<{ seen: Seen[]; unknown: number }> {
    const seen: Seen[] = [];
    let unknown = 0;
    let settled = 0;
    const now = Date.now();
    // NOTE: one gRPC call per 1,000 providers (a REST request per provider was 5,000 requests a pass at 5,000 hosts)
    const consumers = await this.placement.providerConsumers([...live, ...retired].map((n) => n.uuid));
    for (const n of [...live, ...retired]) {
      const held = consumers.get(n.uuid);
      if (n.deletedAt === null && now - n.createdAt.getTime() >= this.graceMs) settled++;
      // NOTE: a retired node's provider is expected to go (the sweep deletes it); only a live one placement lacks is unknown
      if (held === undefined && n.deletedAt === null) unknown++;
      for (const consumer of held ?? []) seen.push({ consumer, provider: n.uuid });
    }
    if (settled > 0 && unknown === live.length) throw new AuditProvidersUnknownError(live.length, this.placementUrl);
    return { seen, unknown };
  }

  private async verdicts(nodes: readonly ComputeNodeRecord[], seen: readonly Seen[]): Promise<Map<string, AuditVerdict>> {
    const uuids = [...new Set(seen.map((s) => s.consumer))];
    const instances = new Map((await listInstanceHoldings(this.pool, { uuids, includeDeleted: true })).map((i) => [i.uuid, i]));
    const migrations = await findMigrations(this.pool, { uuids, instanceUuids: [...instances.keys()] });
    const statusOf = new Map(migrations.map((m) => [m.uuid, m.status]));
    const movesOf = new Map<string, MigrationRecord[]>();
    for (const m of migrations) {
      const moves = movesOf.get(m.instanceUuid);
      if (moves === undefined) movesOf.set(m.instanceUuid, [m]);
      else moves.push(m);
    }
    const nodeUuidOf = nodeIndex(nodes);
    const out = new Map<string, AuditVerdict>();
    for (const s of seen) {
      const i = instances.get(s.consumer);
      const status = statusOf.get(s.consumer);
      out.set(
        `${s.consumer}/${s.provider}`,
        classifyAllocation({
          consumerUuid: s.consumer,
          providerUuid: s.provider,
          isMigration: status !== undefined,
          ...(status === undefined ? {} : { migrationStatus: status }),
          instance:
            i === undefined
              ? undefined
              : {
                  vmState: i.vmState,
                  node: i.node,
                  deleted: i.deletedAt !== null,
                  computeNodeUuid: nodeUuidOf(i),
                  ...moveOf(nodeUuidOf, movesOf.get(i.uuid) ?? []),
                },
        }),
      );
    }
    return out;
  }

  private async heal(consumer: string, leakedProviders: ReadonlySet<string>, instance: InstanceHolding | undefined): Promise<void> {
    const current = await this.placement.consumerAllocations(consumer);
    if (current === undefined) return;
    const keep = current.allocations.filter((a) => !leakedProviders.has(a.resourceProviderUuid));
    if (keep.length === 0 || instance === undefined) await this.placement.release([consumer]);
    else
      await this.placement.claim(instanceConsumer({ uuid: consumer, projectId: instance.projectId, userId: instance.userId }, keep), {
        replace: true,
      });
  }

  /** One pass. Safe to run concurrently with builds; not with another audit of the same cell. */
  async run(now = Date.now()): Promise<AuditReport> {
    const audited = await auditedNodes(this.pool);
    // NOTE: live nodes first: an instance's node is looked up in this order
    const nodes = [...audited.live, ...audited.retired];
    // NOTE: the instances holding resources are read before the allocations: an instance is created
    // after its claim, so one created while the pass reads is not taken for an instance without any
    // (read after, every build in flight was reported missing at each pass under load)
    const holding = await listInstanceHoldings(this.pool, { vmStates: ['active', 'building', 'stopped', 'resized'] });
    const { seen, unknown } = await this.gather(audited);
    const first = await this.verdicts(nodes, seen);
    const suspects = [...first].filter(([, v]) => v !== 'ok').map(([k]) => k);
    const due = this.tracker.pass(suspects, now);
    // NOTE: re-read before healing: the instance may have settled since the first read.
    const again = due.length === 0 ? new Map<string, AuditVerdict>() : await this.verdicts(nodes, (await this.gather(audited)).seen);
    const healed: HealedAllocation[] = [];
    const byConsumer = new Map<string, Set<string>>();
    for (const key of due) {
      const verdict = again.get(key);
      if (verdict === undefined || verdict === 'ok') continue;
      const [consumerUuid = '', providerUuid = ''] = key.split('/');
      byConsumer.set(consumerUuid, (byConsumer.get(consumerUuid) ?? new Set()).add(providerUuid));
      healed.push({ consumerUuid, providerUuid, reason: verdict });
    }
    const instances = new Map(
      (await listInstanceHoldings(this.pool, { uuids: [...byConsumer.keys()], includeDeleted: true })).map((i) => [i.uuid, i]),
    );
    for (const [consumer, providers] of byConsumer)
      await this.heal(consumer, providers, instances.get(consumer)?.deletedAt === null ? instances.get(consumer) : undefined);
    const consumers = new Set(seen.map((s) => s.consumer));
    const missing = holding.filter((i) => i.host !== null && !consumers.has(i.uuid)).map((i) => i.uuid);
    return {
      providers: nodes.length,
      allocations: seen.length,
      suspects: suspects.length - healed.length,
      healed,
      missing,
      unknownProviders: unknown,
    };
  }
}
