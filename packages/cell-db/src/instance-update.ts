import { RequestSpec, type Selection } from '@cellsched/wire';
import { CellDbError, checkUuid, type Queryable } from './db';
import { getInstance } from './instances';
import { hostListJson, INSTANCE_COLUMNS, toInstanceRecord, type InstanceRecord, type InstanceRow } from './instance-record';
import type { VmStateName } from './vm-states';

/** Fields an update may change; `undefined` leaves a field as it is, `null` clears it. */
export interface InstanceChanges {
  vmState?: VmStateName;
  taskState?: string | null;
  powerState?: number;
  host?: string | null;
  node?: string | null;
  availabilityZone?: string | null;
  displayName?: string | null;
  launchedAt?: Date | null;
  terminatedAt?: Date | null;
  buildAttempt?: number;
  buildHostList?: readonly Selection[];
  buildRequestSpec?: RequestSpec | null;
  buildDeadlineAt?: Date | null;
}

/**
 * Nova's `instance.save(expected_task_state=..., expected_vm_state=...)`: the update applies
 * only if the current state is one of these (`null` in `expectedTaskState` means "no task").
 */
export interface StateGuard {
  expectedTaskState?: readonly (string | null)[];
  expectedVmState?: readonly VmStateName[];
}

/**
 * The outcome of a guarded update. `unexpected_task_state` / `unexpected_vm_state` carry the
 * current row (Nova's UnexpectedTaskStateError; `taskState === 'deleting'` is its
 * UnexpectedDeletingTaskStateError): an expected outcome, e.g. a redelivered message whose
 * first delivery already moved the instance on, or a user delete racing a build.
 */
export type UpdateInstanceResult =
  | { readonly kind: 'updated'; readonly instance: InstanceRecord }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unexpected_task_state'; readonly instance: InstanceRecord }
  | { readonly kind: 'unexpected_vm_state'; readonly instance: InstanceRecord };

type Encoder = (v: never) => unknown;
const COLUMNS: Record<keyof InstanceChanges, [string, Encoder]> = {
  vmState: ['vm_state', (v: VmStateName) => v],
  taskState: ['task_state', (v: string | null) => v],
  powerState: ['power_state', (v: number) => v],
  host: ['host', (v: string | null) => v],
  node: ['node', (v: string | null) => v],
  availabilityZone: ['availability_zone', (v: string | null) => v],
  displayName: ['display_name', (v: string | null) => v],
  launchedAt: ['launched_at', (v: Date | null) => v],
  terminatedAt: ['terminated_at', (v: Date | null) => v],
  buildAttempt: ['build_attempt', (v: number) => v],
  buildHostList: ['build_host_list', (v: readonly Selection[]) => hostListJson(v)],
  buildRequestSpec: ['build_request_spec', (v: RequestSpec | null) => (v === null ? null : JSON.stringify(RequestSpec.toJSON(v)))],
  buildDeadlineAt: ['build_deadline_at', (v: Date | null) => v],
};

function setClause(changes: InstanceChanges, values: unknown[]): string {
  const sets = ['updated_at = now()'];
  for (const [key, value] of Object.entries(changes) as [keyof InstanceChanges, unknown][]) {
    const spec = COLUMNS[key] as [string, Encoder] | undefined;
    if (spec === undefined) throw new CellDbError('cell_db.instance.invalid', `unknown instance field ${String(key)}`);
    if (value === undefined) continue;
    values.push(spec[1](value as never));
    sets.push(`${spec[0]} = $${values.length}`);
  }
  return sets.join(', ');
}

/**
 * Updates a live instance if the guard holds, atomically (one UPDATE ... WHERE state matches).
 * Safe to retry: with a guard, a retry after success reports `unexpected_*` and changes nothing.
 * Without a guard it is a plain last-writer-wins update. Deleted instances are `not_found`.
 */
export async function updateInstance(db: Queryable, uuid: string, changes: InstanceChanges, guard: StateGuard = {}): Promise<UpdateInstanceResult> {
  const id = checkUuid(uuid, 'instance uuid');
  if (changes.buildAttempt !== undefined && (!Number.isSafeInteger(changes.buildAttempt) || changes.buildAttempt < 1)) {
    throw new CellDbError('cell_db.instance.invalid', 'build_attempt must be an integer >= 1');
  }
  const tasks = guard.expectedTaskState;
  // NOTE: NULL never matches = ANY(), so "no task" is passed as its own flag ($3).
  const values: unknown[] = [id, tasks?.filter((t) => t !== null) ?? null, tasks?.includes(null) ?? false, guard.expectedVmState ?? null];
  const r = await db.query<InstanceRow>(
    `UPDATE instances SET ${setClause(changes, values)}
     WHERE uuid = $1 AND deleted_at IS NULL
       AND ($2::text[] IS NULL OR task_state = ANY($2) OR (task_state IS NULL AND $3))
       AND ($4::text[] IS NULL OR vm_state = ANY($4)) RETURNING ${INSTANCE_COLUMNS}`, values);
  if (r.rows[0] !== undefined) return { kind: 'updated', instance: toInstanceRecord(r.rows[0]) };
  const current = await getInstance(db, id);
  if (current === undefined) return { kind: 'not_found' };
  if (tasks !== undefined && !tasks.includes(current.taskState)) return { kind: 'unexpected_task_state', instance: current };
  if (guard.expectedVmState !== undefined && !guard.expectedVmState.includes(current.vmState)) return { kind: 'unexpected_vm_state', instance: current };
  // The row changed between the UPDATE and the read so that the guard now holds: report it as a lost race.
  return { kind: 'unexpected_task_state', instance: current };
}
