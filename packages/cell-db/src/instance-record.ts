import { Flavor, Instance, RequestSpec, Selection } from '@cellsched/wire';
import { vmStateToWire, type VmStateName } from './vm-states';

/** One row of a cell's `instances` table (Nova's Instance, trimmed). */
export interface InstanceRecord {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  readonly displayName: string | null;
  readonly hostname: string | null;
  readonly flavor: Flavor;
  readonly imageRef: string | null;
  readonly vmState: VmStateName;
  /** NULL in Nova is `null` here: no task in progress. */
  readonly taskState: string | null;
  readonly powerState: number;
  readonly host: string | null;
  readonly node: string | null;
  readonly availabilityZone: string | null;
  readonly launchedAt: Date | null;
  readonly terminatedAt: Date | null;
  readonly reservationId: string | null;
  readonly launchIndex: number;
  /** Hosts tried so far for this build (1 = the scheduler's first choice). */
  readonly buildAttempt: number;
  /**
   * A build: the alternates not tried yet, in order (the cell conductor's in-cell retry list). An
   * unshelve or a move being scheduled: the super-conductor's whole host list for its request (chosen
   * host first), so a recast after a crash still carries the alternates.
   */
  readonly buildHostList: readonly Selection[];
  /** The RequestSpec a retried build is sent with (watchdog retries have no message to copy it from). */
  readonly buildRequestSpec: RequestSpec | undefined;
  /** When a build still in `building` is presumed lost (the watchdog's deadline). */
  readonly buildDeadlineAt: Date | null;
  /** Nova's instance_extra.old_flavor: the flavor before a resize (until confirm or revert), else undefined. */
  readonly oldFlavor: Flavor | undefined;
  /** Nova's instance_extra.new_flavor: the flavor a resize (or migrate: the same) goes to, else undefined. */
  readonly newFlavor: Flavor | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

/** Columns as selected from `instances`. */
export interface InstanceRow {
  uuid: string;
  project_id: string;
  user_id: string;
  display_name: string | null;
  hostname: string | null;
  flavor: unknown;
  image_ref: string | null;
  vm_state: VmStateName;
  task_state: string | null;
  power_state: number;
  host: string | null;
  node: string | null;
  availability_zone: string | null;
  launched_at: Date | null;
  terminated_at: Date | null;
  reservation_id: string | null;
  launch_index: number;
  build_attempt: number;
  build_host_list: unknown[];
  build_request_spec: unknown;
  build_deadline_at: Date | null;
  old_flavor: unknown;
  new_flavor: unknown;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export const INSTANCE_COLUMNS = `uuid, project_id, user_id, display_name, hostname, flavor, image_ref, vm_state, task_state, power_state,
  host, node, availability_zone, launched_at, terminated_at, reservation_id, launch_index, build_attempt, build_host_list,
  build_request_spec, build_deadline_at, old_flavor, new_flavor, created_at, updated_at, deleted_at`;

/** Maps a row selected with {@link INSTANCE_COLUMNS}. Pure. */
export function toInstanceRecord(r: InstanceRow): InstanceRecord {
  return {
    uuid: r.uuid,
    projectId: r.project_id,
    userId: r.user_id,
    displayName: r.display_name,
    hostname: r.hostname,
    flavor: Flavor.fromJSON(r.flavor),
    imageRef: r.image_ref,
    vmState: r.vm_state,
    taskState: r.task_state,
    powerState: r.power_state,
    host: r.host,
    node: r.node,
    availabilityZone: r.availability_zone,
    launchedAt: r.launched_at,
    terminatedAt: r.terminated_at,
    reservationId: r.reservation_id,
    launchIndex: r.launch_index,
    buildAttempt: r.build_attempt,
    buildHostList: r.build_host_list.map((s) => Selection.fromJSON(s)),
    buildRequestSpec: r.build_request_spec === null ? undefined : RequestSpec.fromJSON(r.build_request_spec),
    buildDeadlineAt: r.build_deadline_at,
    oldFlavor: r.old_flavor === null ? undefined : Flavor.fromJSON(r.old_flavor),
    newFlavor: r.new_flavor === null ? undefined : Flavor.fromJSON(r.new_flavor),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}

/** JSON text of a Selection list for `build_host_list`. Pure. */
export function hostListJson(list: readonly Selection[]): string {
  return JSON.stringify(list.map((s) => Selection.toJSON(s)));
}

/** The wire Instance (what casts carry and the API shows), tagged with its cell. Pure. */
export function toWireInstance(r: InstanceRecord, cellUuid: string): Instance {
  return {
    uuid: r.uuid,
    projectId: r.projectId,
    userId: r.userId,
    displayName: r.displayName ?? '',
    flavor: r.flavor,
    imageRef: r.imageRef ?? '',
    vmState: vmStateToWire(r.vmState),
    taskState: r.taskState ?? '',
    host: r.host ?? '',
    node: r.node ?? '',
    availabilityZone: r.availabilityZone ?? '',
    cellUuid,
    createdAt: r.createdAt,
    launchedAt: r.launchedAt ?? undefined,
    reservationId: r.reservationId ?? '',
    launchIndex: r.launchIndex,
  };
}
