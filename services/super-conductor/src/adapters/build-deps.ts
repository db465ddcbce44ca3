import type { BuildRequest, PlacedInstance } from '@cellsched/api-db';
import {
  checkUuid,
  deleteInstanceMapping,
  deleteRequestSpec,
  mapToCellsAndDeleteBuildRequests,
  removeInstanceGroupMember,
} from '@cellsched/api-db';
import { GroupCommit, withTransaction } from '@cellsched/db';
import {
  checkInstanceWithAction,
  createInstancesWithActions,
  type InstanceRecord,
  type NewInstance,
  type NewInstanceWithAction,
} from '@cellsched/cell-db';
import type { RequestSpec } from '@cellsched/wire';
import type { Pool } from 'pg';
import type { ClaimReleaser } from '../ports';
import type { CellRegistry } from './cells';

/** What the super-conductor's handlers need. */
export interface BuildDeps {
  readonly apiDb: Pool;
  readonly cells: CellRegistry;
  readonly claims: ClaimReleaser;
  /** Deadline of the first build attempt (the cell conductor's watchdog acts past it). */
  readonly buildTimeoutMs: number;
  /** Step 4's API DB write (mapping to the cell, build request deleted): whether the build request was still there. */
  readonly cellMappings: GroupCommit<PlacedInstance, boolean>;
  /** Step 4's cell write (the instance, its create action and schedule event) through the cell's group commit. */
  readonly cellInstances: CellInstanceWriters;
}

/** The group commit of step 4's instance rows into a cell, one per cell connection pool. */
export type CellInstanceWriters = (cellPool: Pool) => GroupCommit<NewInstanceWithAction, { instance: InstanceRecord; created: boolean }>;

/**
 * One group commit per cell pool ({@link createInstancesWithActions}): the instances placed in a
 * cell while one statement runs go in the next. NOTE: 'each-alone': the insert is idempotent and
 * its answer for a repeat (the existing row) is what a redelivery gets anyway, so a failed batch
 * is written again item by item and one refused instance never fails the others. A pool replaced
 * (the cell reopened) gets its own writer; the old one goes with it.
 */
export function cellInstanceWriters(): CellInstanceWriters {
  const writers = new WeakMap<Pool, GroupCommit<NewInstanceWithAction, { instance: InstanceRecord; created: boolean }>>();
  return (cellPool) => {
    let w = writers.get(cellPool);
    if (w === undefined) {
      w = new GroupCommit((items) => createInstancesWithActions(cellPool, items), { check: (x) => void checkInstanceWithAction(x) });
      writers.set(cellPool, w);
    }
    return w;
  };
}

/**
 * The group commit of step 4's API DB writes: the instances placed while one statement runs go
 * in the next ({@link mapToCellsAndDeleteBuildRequests}). NOTE: 'all-fail': sent again after a
 * commit lost with its connection, the write would answer "build request gone" and the server
 * would be cleaned up as deleted; failing the deliveries instead, they are redelivered and resumed.
 */
export function cellMappingWriter(apiDb: Pool): GroupCommit<PlacedInstance, boolean> {
  return new GroupCommit((placed) => mapToCellsAndDeleteBuildRequests(apiDb, placed), {
    onBatchError: 'all-fail',
    check: (p) => checkUuid(p.instanceUuid, 'instance uuid'),
  });
}

/** The cell instance row of a build request (everything but where it goes and its state). Pure. */
export function instanceFrom(br: BuildRequest, spec: RequestSpec): Omit<NewInstance, 'vmState'> {
  const i = br.instance;
  const flavor = spec.flavor ?? i.flavor;
  if (flavor === undefined) throw new Error(`build request ${br.instanceUuid} has no flavor`);
  return {
    uuid: br.instanceUuid,
    projectId: i.projectId || br.projectId,
    userId: i.userId || spec.userId,
    displayName: i.displayName || null,
    flavor,
    imageRef: i.imageRef || null,
    availabilityZone: i.availabilityZone || spec.availabilityZone || null,
    reservationId: i.reservationId || null,
    launchIndex: i.launchIndex,
  };
}

/**
 * The API-level leftovers of a deleted server, in one API DB transaction: its mapping, request
 * spec and server-group membership. Called once nothing else needs them (the claim released,
 * the cell row deleted): while the server is being scheduled, and at the end of
 * `delete_instance` (the api's sweeper re-casts the delete of any mapping still queued for
 * delete, so a mapping left behind would be re-deleted forever). Idempotent.
 */
export async function forgetServer(deps: BuildDeps, instanceUuid: string): Promise<void> {
  await withTransaction(deps.apiDb, async (c) => {
    await removeInstanceGroupMember(c, instanceUuid);
    await deleteRequestSpec(c, instanceUuid);
    await deleteInstanceMapping(c, instanceUuid);
  });
}
