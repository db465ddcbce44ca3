import type { InstanceFault, InstanceRecord, VmStateName } from '@cellsched/cell-db';
import type { Flavor } from '@cellsched/wire';
import type { HostStatus } from './host-status';

/**
 * A server as the API shows it, whatever it was read from: a BuildRequest (not in a cell
 * yet), a cell's instances row, or only its InstanceMapping when its cell is down. The fields
 * it shares with a cell's {@link InstanceRecord} are that record's.
 */
export interface ServerRecord extends Pick<
  InstanceRecord,
  | 'uuid'
  | 'projectId'
  | 'userId'
  | 'taskState'
  | 'powerState'
  | 'host'
  | 'node'
  | 'availabilityZone'
  | 'launchedAt'
  | 'terminatedAt'
  | 'reservationId'
  | 'launchIndex'
  | 'hostname'
  | 'createdAt'
  | 'updatedAt'
> {
  readonly name: string;
  readonly flavor: Flavor | undefined;
  readonly imageRef: string;
  /** `unknown`: the server's cell did not answer (only the mapping was read). */
  readonly vmState: VmStateName | 'unknown';
  readonly fault: InstanceFault | undefined;
  /** Nova's host_status: its host's compute service as the cell holds it ('' without a host). */
  readonly hostStatus: HostStatus;
  /**
   * Where it was read from: `mapping` and `request_spec` are servers of a cell that did not
   * answer (the latter with what the RequestSpec knows, for `GET /servers/{id}`).
   */
  readonly source: 'build_request' | 'cell' | 'mapping' | 'request_spec';
}

/** Nova's sort for lists: created_at desc, then uuid desc (total, the same in every cell). Pure. */
export function compareServers(a: Pick<ServerRecord, 'createdAt' | 'uuid'>, b: Pick<ServerRecord, 'createdAt' | 'uuid'>): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.uuid < b.uuid ? 1 : a.uuid > b.uuid ? -1 : 0;
}

/** An accepted server action its cell does not hold yet (the API DB's server_task_intents row, as the view needs it). */
export interface PendingAction {
  /** Nova's instance action name (`stop`, `rebuild`, ...). */
  readonly action: string;
  /** The task_state the action sets at once; null for one that sets none (confirmResize). */
  readonly taskState: string | null;
  /** rebuild: the new image and, if given, the new name (Nova saves both before it casts). */
  readonly imageRef?: string;
  readonly displayName?: string;
}

/**
 * The server as Nova would show it once the API had saved the action (Nova's API saves the
 * task_state before it casts; here the super-conductor saves it in the cell a moment later).
 * The cell wins as soon as it holds any task_state of its own: it has applied the action (or
 * another one) and moved on. Only for servers read from their cell. Pure.
 */
export function withPendingAction(r: ServerRecord, p: PendingAction | undefined): ServerRecord {
  if (p === undefined || r.source !== 'cell' || r.taskState !== null) return r;
  const rebuilt = p.action === 'rebuild' ? { imageRef: p.imageRef || r.imageRef, name: p.displayName || r.name } : {};
  return { ...r, taskState: p.taskState, ...rebuilt };
}
