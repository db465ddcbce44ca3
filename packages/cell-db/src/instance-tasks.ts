import { RequestSpec, Selection } from '@cellsched/wire';
import { CellDbError, checkUuid, type Queryable } from './db';
import { hostListJson } from './instance-record';
import type { VmStateName } from './vm-states';

/**
 * The state of the action in progress on one instance (`instance_tasks`, migration 006): which
 * compute step is in flight on which host, until when, and what the rest of the action needs
 * (alternates, the migration, the action's arguments). One per instance at most.
 */
export interface InstanceTaskRecord {
  readonly instanceUuid: string;
  readonly requestId: string;
  /** Nova's instance action name ('stop', 'migrate', 'live-migration', ...). */
  readonly action: string;
  /** The compute step in flight (InstanceStepRequest.step). */
  readonly step: string;
  readonly stepHost: string;
  /** Which destination of the host list (1 = the scheduler's first choice); 1 for actions that stay on their host. */
  readonly attempt: number;
  readonly deadlineAt: Date;
  /** What cast the current step: 'action', or `<step>@<host>#<attempt>` of the result that advanced to it. */
  readonly enteredBy: string;
  readonly migrationUuid: string | null;
  /** The alternates not tried yet, in order. */
  readonly hostList: readonly Selection[];
  readonly requestSpec: RequestSpec | undefined;
  /** The action's arguments (reboot_type, image_ref, display_name). */
  readonly params: Readonly<Record<string, string>>;
  /** vm_state before the action (a failed action puts it back). */
  readonly priorVmState: VmStateName;
  /** Set once a move is rolling back: why it failed. */
  readonly failure: string | null;
  readonly traceParent: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface Row {
  instance_uuid: string;
  request_id: string;
  action: string;
  step: string;
  step_host: string;
  attempt: number;
  deadline_at: Date;
  entered_by: string;
  migration_uuid: string | null;
  host_list: unknown[];
  request_spec: unknown;
  params: Record<string, string>;
  prior_vm_state: VmStateName;
  failure: string | null;
  trace_parent: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `instance_uuid, request_id, action, step, step_host, attempt, deadline_at, entered_by, migration_uuid, host_list, request_spec,
  params, prior_vm_state, failure, trace_parent, created_at, updated_at`;

function toTask(r: Row): InstanceTaskRecord {
  return {
    instanceUuid: r.instance_uuid,
    requestId: r.request_id,
    action: r.action,
    step: r.step,
    stepHost: r.step_host,
    attempt: r.attempt,
    deadlineAt: r.deadline_at,
    enteredBy: r.entered_by,
    migrationUuid: r.migration_uuid,
    hostList: r.host_list.map((s) => Selection.fromJSON(s)),
    requestSpec: r.request_spec === null ? undefined : RequestSpec.fromJSON(r.request_spec),
    params: r.params,
    priorVmState: r.prior_vm_state,
    failure: r.failure,
    traceParent: r.trace_parent,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface NewInstanceTask {
  readonly instanceUuid: string;
  readonly requestId: string;
  readonly action: string;
  readonly step: string;
  readonly stepHost: string;
  readonly attempt?: number;
  readonly deadlineAt: Date;
  readonly migrationUuid?: string | null;
  readonly hostList?: readonly Selection[];
  readonly requestSpec?: RequestSpec;
  readonly params?: Readonly<Record<string, string>>;
  readonly priorVmState: VmStateName;
  readonly traceParent?: string | null;
}

function checkAttempt(attempt: number | undefined): void {
  if (attempt !== undefined && (!Number.isSafeInteger(attempt) || attempt < 1))
    throw new CellDbError('cell_db.instance_task.invalid', 'attempt must be an integer >= 1');
}

/**
 * Records the start of an action's first step. Idempotent per instance: if the instance already has
 * a task (this request's, redelivered; or another's) nothing changes, `created` is false and the
 * existing row is returned, so the caller can tell a repeat from a conflict. Bad input throws
 * `cell_db.instance_task.invalid`; a missing instance is a foreign-key error.
 */
export async function createInstanceTask(db: Queryable, t: NewInstanceTask): Promise<{ task: InstanceTaskRecord; created: boolean }> {
  if (t.requestId === '' || t.action === '' || t.step === '' || t.stepHost === '') {
    throw new CellDbError('cell_db.instance_task.invalid', 'request_id, action, step and step_host must not be empty');
  }
  checkAttempt(t.attempt);
  const uuid = checkUuid(t.instanceUuid, 'instance uuid');
  const r = await db.query<Row>(
    `INSERT INTO instance_tasks (instance_uuid, request_id, action, step, step_host, attempt, deadline_at, migration_uuid, host_list, request_spec,
       params, prior_vm_state, trace_parent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (instance_uuid) DO NOTHING RETURNING ${COLUMNS}`,
    [
      uuid,
      t.requestId,
      t.action,
      t.step,
      t.stepHost,
      t.attempt ?? 1,
      t.deadlineAt,
      t.migrationUuid === undefined || t.migrationUuid === null ? null : checkUuid(t.migrationUuid, 'migration uuid'),
      hostListJson(t.hostList ?? []),
      t.requestSpec === undefined ? null : JSON.stringify(RequestSpec.toJSON(t.requestSpec)),
      JSON.stringify(t.params ?? {}),
      t.priorVmState,
      t.traceParent ?? null,
    ],
  );
  if (r.rows[0] !== undefined) return { task: toTask(r.rows[0]), created: true };
  const existing = await getInstanceTask(db, uuid);
  if (existing === undefined) throw new CellDbError('cell_db.instance_task.race', `task of instance ${uuid} vanished during create`);
  return { task: existing, created: false };
}

/** The instance's task in progress, or undefined. Read-only (lock the instance row first to act on it). */
export async function getInstanceTask(db: Queryable, instanceUuid: string): Promise<InstanceTaskRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM instance_tasks WHERE instance_uuid = $1`, [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows[0] === undefined ? undefined : toTask(r.rows[0]);
}

/** The step a change is guarded on: the task must still be at exactly this step of this request. */
export interface TaskStepGuard {
  readonly requestId: string;
  readonly step: string;
  readonly stepHost: string;
  readonly attempt: number;
}

/** Moves a task to its next step (with what changes along). */
export interface TaskAdvance {
  readonly step: string;
  readonly stepHost: string;
  readonly attempt: number;
  readonly deadlineAt: Date;
  readonly enteredBy: string;
  /** The alternates left; undefined leaves them. */
  readonly hostList?: readonly Selection[];
  /** Set when the move starts rolling back; undefined leaves it. */
  readonly failure?: string;
}

/**
 * Advances the task to its next step if it is still at the guarded one (one UPDATE … WHERE); the
 * row after, or undefined when the guard failed (a late or repeated result: nothing written).
 */
export async function advanceInstanceTask(
  db: Queryable,
  instanceUuid: string,
  guard: TaskStepGuard,
  next: TaskAdvance,
): Promise<InstanceTaskRecord | undefined> {
  checkAttempt(next.attempt);
  const r = await db.query<Row>(
    `UPDATE instance_tasks SET step = $6, step_host = $7, attempt = $8, deadline_at = $9, entered_by = $10,
       host_list = coalesce($11::jsonb, host_list), failure = coalesce($12, failure), updated_at = now()
     WHERE instance_uuid = $1 AND request_id = $2 AND step = $3 AND step_host = $4 AND attempt = $5 RETURNING ${COLUMNS}`,
    [
      checkUuid(instanceUuid, 'instance uuid'),
      guard.requestId,
      guard.step,
      guard.stepHost,
      guard.attempt,
      next.step,
      next.stepHost,
      next.attempt,
      next.deadlineAt,
      next.enteredBy,
      next.hostList === undefined ? null : hostListJson(next.hostList),
      next.failure ?? null,
    ],
  );
  return r.rows[0] === undefined ? undefined : toTask(r.rows[0]);
}

/** Ends the request's task (the action is over). Idempotent: false when it had none (or another request's). */
export async function endInstanceTask(db: Queryable, instanceUuid: string, requestId: string): Promise<boolean> {
  const r = await db.query('DELETE FROM instance_tasks WHERE instance_uuid = $1 AND request_id = $2', [
    checkUuid(instanceUuid, 'instance uuid'),
    requestId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** A task whose step the watchdog must fail: past its deadline, or on a host whose compute service is gone. */
export interface OverdueInstanceTask {
  readonly instanceUuid: string;
  readonly requestId: string;
  readonly step: string;
  readonly stepHost: string;
  readonly attempt: number;
  /** The step host's nova-compute service is deleted (or was never registered) or forced down. */
  readonly hostGone: boolean;
  /** Its last heartbeat is older than service_down_time (or it is gone). */
  readonly hostDown: boolean;
  readonly migrationUuid: string | null;
  readonly traceParent: string | null;
}

/**
 * Tasks whose step will not finish: on a host that is gone (its compute service deleted or forced
 * down) at once, whatever the deadline; any other past its deadline. Oldest deadline first.
 * Read-only: the caller fails each step under the instance's row lock, guarded on the step.
 */
export async function listOverdueInstanceTasks(
  db: Queryable,
  o: { readonly serviceDownTimeMs: number; readonly limit?: number; readonly now?: Date },
): Promise<OverdueInstanceTask[]> {
  const r = await db.query<{
    instance_uuid: string;
    request_id: string;
    step: string;
    step_host: string;
    attempt: number;
    host_gone: boolean;
    host_down: boolean;
    migration_uuid: string | null;
    trace_parent: string | null;
  }>(
    `SELECT * FROM (
       SELECT t.instance_uuid, t.request_id, t.step, t.step_host, t.attempt, t.migration_uuid, t.trace_parent, t.deadline_at,
              (s.id IS NULL OR s.forced_down) AS host_gone,
              (s.id IS NULL OR s.forced_down OR coalesce(s.last_seen_up, s.created_at) < coalesce($3::timestamptz, now()) - $1 * interval '1 millisecond') AS host_down
       FROM instance_tasks t
       LEFT JOIN services s ON s.host = t.step_host AND s."binary" = 'nova-compute' AND s.deleted_at IS NULL) o
     WHERE host_gone OR deadline_at < coalesce($3::timestamptz, now())
     ORDER BY deadline_at LIMIT $2`,
    [o.serviceDownTimeMs, o.limit ?? 100, o.now ?? null],
  );
  return r.rows.map((t) => ({
    instanceUuid: t.instance_uuid,
    requestId: t.request_id,
    step: t.step,
    stepHost: t.step_host,
    attempt: t.attempt,
    hostGone: t.host_gone,
    hostDown: t.host_down,
    migrationUuid: t.migration_uuid,
    traceParent: t.trace_parent,
  }));
}
