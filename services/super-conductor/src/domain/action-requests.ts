/**
 * What a server action sends on: the RequestSpec and MoveContext it is scheduled with, the
 * InstanceActionRequest cast to the cell conductor, and the faults of its failures. Pure.
 */
import {
  FAILURE_CODES,
  type Failure,
  type InstanceActionRequest,
  type MoveContext,
  type RequestSpec,
  type Selection,
} from '@cellsched/wire';
import type { ActionInstance, ComputeServiceState } from '../ports';
import { noValidHostFault } from './build-plan';
import type { ActionPlan } from './server-actions';

/** A spec for an instance whose RequestSpec is gone from the API DB (what the instance itself says). */
function specFromInstance(i: ActionInstance): RequestSpec {
  return {
    instanceUuid: i.uuid,
    projectId: i.projectId,
    userId: i.userId,
    flavor: i.flavor,
    image: undefined,
    numInstances: 1,
    availabilityZone: '',
    instanceGroup: undefined,
    schedulerHints: {},
    requestedDestination: undefined,
    ignoreHosts: [],
    seed: 0,
    requestId: '',
  };
}

/** The flavor the instance is scheduled with: a resize's new one, else its current one. */
function scheduledFlavor(plan: ActionPlan, i: ActionInstance) {
  return plan.req.action === 'resize' && plan.req.flavor !== undefined ? plan.req.flavor : i.flavor;
}

/**
 * The spec a move or an unshelve is scheduled with (Nova's conductor: the instance's RequestSpec
 * with requested_destination = the instance's cell, and the host the user named; ignore_hosts
 * starts empty, the scheduler adds the source of a move; a resize's new flavor; an unshelve's
 * availability zone when 2.77 gave one). One instance.
 */
export function scheduleSpec(plan: ActionPlan, i: ActionInstance, stored: RequestSpec | undefined): RequestSpec {
  const { req } = plan;
  const base = stored ?? specFromInstance(i);
  const az = plan.def.kind === 'unshelve' && req.availabilityZone !== '' ? req.availabilityZone : base.availabilityZone;
  return {
    ...base,
    instanceUuid: i.uuid,
    projectId: i.projectId,
    userId: i.userId,
    flavor: scheduledFlavor(plan, i),
    numInstances: 1,
    availabilityZone: az,
    requestedDestination: { host: req.host, node: '', cellUuid: req.cellUuid, aggregates: [], allowCrossCellMove: false },
    ignoreHosts: [],
    requestId: req.requestId,
  };
}

/**
 * Whether the move names a forced destination: evacuate (2.29+) or live migration (2.30+) with
 * `force` and a host. Nova then bypasses the scheduler: the host is claimed directly (placement
 * still checks capacity), with no filter and no alternate. Pure.
 */
export function forcedDestination(plan: ActionPlan): boolean {
  const { req } = plan;
  return req.force && req.host !== '' && (req.action === 'evacuate' || req.action === 'live-migration');
}

/** A move's MoveContext (undefined for an unshelve): the source is excluded unless a resize may stay (Nova's allow_resize_to_same_host). */
export function moveContext(plan: ActionPlan, i: ActionInstance, allowResizeToSameHost: boolean): MoveContext | undefined {
  if (plan.def.kind !== 'move' || plan.migrationUuid === undefined) return undefined;
  return {
    migrationUuid: plan.migrationUuid,
    sourceHost: i.host ?? '',
    sourceNode: i.node ?? '',
    allowSameHost: plan.req.action === 'resize' && allowResizeToSameHost,
    force: forcedDestination(plan),
  };
}

/**
 * Nova's LiveMigrationTask checks of a forced destination (nova/conductor/tasks/live_migrate.py,
 * the scheduler bypassed): not the instance's own host (UnableToMigrateToSelf), its compute
 * service up (ComputeServiceUnavailable: heartbeat within `serviceDownTimeMs`, not forced down).
 * The fault that fails the action, or undefined. A forced evacuation has no such check in Nova. Pure.
 */
export function forcedLiveMigrationFault(
  plan: ActionPlan,
  i: ActionInstance,
  svc: ComputeServiceState | undefined,
  now: Date,
  serviceDownTimeMs: number,
): ActionFault | undefined {
  const { req } = plan;
  if (!forcedDestination(plan) || req.action !== 'live-migration') return undefined;
  if (req.host === i.host) {
    return {
      message: `Unable to migrate instance (${i.uuid}) to current host (${req.host}).`,
      details: FAILURE_CODES.superConductor.forcedHostRefused,
    };
  }
  const up =
    svc !== undefined && !svc.forcedDown && svc.lastSeenUp !== null && now.getTime() - svc.lastSeenUp.getTime() <= serviceDownTimeMs;
  if (up) return undefined;
  return {
    message: `Compute service of ${req.host} is unavailable at this time.`,
    details: FAILURE_CODES.superConductor.forcedHostRefused,
  };
}

/** The RequestSpec saved back after a resize is scheduled (Nova: the spec's flavor is the new one from now on); undefined otherwise. */
export function savedSpecAfterSchedule(plan: ActionPlan, stored: RequestSpec | undefined): RequestSpec | undefined {
  if (plan.req.action !== 'resize' || stored === undefined || plan.req.flavor === undefined) return undefined;
  return { ...stored, flavor: plan.req.flavor };
}

/**
 * The RequestSpec saved back when a resize is decided: a revert puts the old flavor back (Nova's
 * revert_resize, in its API, so later moves are not scheduled with the flavor given up); a confirm
 * keeps the new one (it already is, unless a revert that failed on the destination restored the old
 * one first). Undefined when the spec already has it (or there is none). Pure.
 */
export function savedSpecOnResizeDecision(plan: ActionPlan, i: ActionInstance, stored: RequestSpec | undefined): RequestSpec | undefined {
  const flavor = plan.req.action === 'revertResize' ? i.oldFlavor : plan.req.action === 'confirmResize' ? i.flavor : undefined;
  if (flavor === undefined || stored === undefined || stored.flavor?.flavorid === flavor.flavorid) return undefined;
  return { ...stored, flavor };
}

/** The Selection of a destination already recorded (a recast): the claim is made, so no allocation request and no alternates. */
export function recordedSelection(host: string, node: string | null, cellUuid: string): Selection {
  return { computeNodeUuid: '', serviceHost: host, nodename: node ?? host, cellUuid, availabilityZone: '', allocationRequest: undefined };
}

/**
 * The host list of a move a previous delivery scheduled (a recast after a crash): the one recorded
 * with its destination on the instance, alternates included, so the cell conductor can still retry
 * in the cell; without one (a row recorded before the list was kept) only the destination. Pure.
 */
export function recordedMoveHostList(
  m: { readonly destCompute: string; readonly destNode: string | null },
  i: ActionInstance,
  cellUuid: string,
): Selection[] {
  const [first] = i.buildHostList;
  if (first !== undefined && first.serviceHost === m.destCompute && first.nodename === (m.destNode ?? first.nodename))
    return [...i.buildHostList];
  return [recordedSelection(m.destCompute, m.destNode, cellUuid)];
}

/** The cast to the cell conductor. Moves and unshelve carry their host list and spec; a move its migration and flavor; a live migration its block_migration. */
export function instanceActionRequest(
  plan: ActionPlan,
  i: ActionInstance,
  hostList: readonly Selection[],
  spec: RequestSpec | undefined,
): InstanceActionRequest {
  const { req } = plan;
  const newFlavor = req.action === 'resize' ? req.flavor : req.action === 'migrate' ? i.flavor : undefined;
  return {
    instanceUuid: req.instanceUuid,
    action: req.action,
    requestId: req.requestId,
    rebootType: req.rebootType,
    imageRef: req.imageRef,
    migrationUuid: plan.migrationUuid ?? '',
    hostList: [...hostList],
    newFlavor,
    requestSpec: spec,
    userId: req.userId,
    projectId: req.projectId,
    displayName: req.displayName,
    blockMigration: req.action === 'live-migration' ? req.blockMigration : '',
  };
}

/** A fault: message and details. */
export interface ActionFault {
  readonly message: string;
  readonly details: string;
}

/** The fault of a scheduling failure: NoValidHost with the scheduler's per-filter diagnosis (or another failure's message). */
export function scheduleFault(failure: Failure): ActionFault {
  return noValidHostFault(failure);
}

/** The fault of a cast the broker refused: the cell has no conductor queue. */
export function unroutableFault(plan: ActionPlan, cellName: string): ActionFault {
  return {
    message: `Cannot '${plan.req.action}' instance ${plan.req.instanceUuid}: the broker refused the cast to the conductor of cell ${cellName} (no conductor serves it)`,
    details: FAILURE_CODES.superConductor.actionUnroutable,
  };
}

/**
 * The fault of an action the api gave up on (its intent expired before the super-conductor
 * applied it): the user sees it on the action's event, instead of the action silently vanishing.
 */
export function expiredFault(plan: ActionPlan): ActionFault {
  const { req } = plan;
  return {
    message: `The '${req.action}' action on instance ${req.instanceUuid} was never taken up: it was not applied within ${req.expiredAfterS} seconds and was abandoned. Retry the action.`,
    details: FAILURE_CODES.superConductor.actionExpired,
  };
}
