import {
  addPendingProviders,
  deleteServices,
  getComputeNode,
  listPendingProviders,
  listServicesNotServedBy,
  removePendingProviders,
  type DeletedServices,
} from '@cellsched/cell-db';
import type { PoolClient, Pool } from 'pg';
import type { Logger } from 'pino';
import type { RetiredProviders } from '../ports';

/**
 * Retires the hosts compute process `name` no longer serves (its report's whole host set):
 * their services and compute nodes are soft-deleted (the scheduler's host cache drops them at
 * its next refresh, os-services and os-hypervisors stop listing them) and their providers are
 * queued for deletion from placement, in the caller's transaction. Nova's analogue is the
 * compute deleting its orphan compute nodes. Instances on a retired host are not touched: they
 * stay in the cell as they are (listed by the API, their allocations kept). Idempotent: a
 * retired host is no longer live, so a repeat retires nothing.
 */
export async function retireHostsNotServed(c: PoolClient, name: string, hostSet: readonly string[]): Promise<DeletedServices> {
  const gone = await listServicesNotServedBy(c, name, hostSet);
  if (gone.length === 0) return { services: [], nodeUuids: [] };
  const deleted = await deleteServices(
    c,
    gone.map((s) => s.id),
  );
  await addPendingProviders(c, name, deleted.nodeUuids);
  return deleted;
}

/** What one pass over the retired providers did. */
export interface RetiredProvidersPass {
  /** Deleted from placement (or already gone). */
  readonly deleted: string[];
  /** Off the list untouched: their host came back (its compute reports the provider again). */
  readonly returned: string[];
  /** Kept, with COMPUTE_STATUS_DISABLED: allocations (of instances still on the host) hold them; tried again next pass. */
  readonly kept: string[];
}

/**
 * Deletes the providers of retired compute nodes from placement (every process's, or one's).
 * A provider still holding allocations is kept, made unschedulable (COMPUTE_STATUS_DISABLED) and
 * tried again on a later pass (the instances' deletes free it); its allocations are never
 * deleted here, because the instances holding them still exist. Why not Nova's cascade (delete
 * the allocations of the node's instances, then the provider): those instances stay ACTIVE in
 * the API, and an ACTIVE instance without its allocation is capacity placement gives away twice.
 * Idempotent; a placement failure throws after recording what was done.
 */
export async function removeRetiredProviders(
  pool: Pool,
  providers: RetiredProviders,
  log: Logger,
  name?: string,
): Promise<RetiredProvidersPass> {
  const pass: RetiredProvidersPass = { deleted: [], kept: [], returned: [] };
  for (const [proc, uuids] of await listPendingProviders(pool, name)) {
    const deleted: string[] = [];
    const returned: string[] = [];
    try {
      for (const uuid of uuids) {
        // NOTE: its host came back (a live node again) since it was queued: the compute reports this provider now, hands off
        if ((await getComputeNode(pool, uuid)) !== undefined) {
          returned.push(uuid);
          continue;
        }
        const outcome = await providers.deleteResourceProvider(uuid);
        if (outcome !== 'in_use') {
          deleted.push(uuid);
          continue;
        }
        await providers.setComputeStatusDisabled(uuid, true);
        pass.kept.push(uuid);
      }
    } finally {
      await removePendingProviders(pool, proc, [...deleted, ...returned]);
      pass.deleted.push(...deleted);
      pass.returned.push(...returned);
    }
  }
  if (pass.deleted.length + pass.kept.length + pass.returned.length > 0) log.info({ ...pass }, "retired hosts' providers");
  return pass;
}
