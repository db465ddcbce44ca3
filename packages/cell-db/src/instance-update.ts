import { RequestSpec, type Flavor, type Selection } from '@cellsched/wire';
import { CellDbError, checkUuid, type Queryable } from './db';
import { EVENT_UPSERT } from './instance-actions';
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
  /** The flavor the instance runs with (finish_resize, revert). */
  flavor?: Flavor;
  /** Nova's instance_extra.old_flavor / new_flavor (a resize in progress or waiting for confirm); null clears. */
  oldFlavor?: Flavor | null;
  newFlavor?: Flavor | null;
  imageRef?: string | null;
}

/**
 * Nova's `instance.save(expected_task_state=..., expected_vm_state=...)`: the update applies
 * only if the current state is one of these (`null` in `expectedTaskState` means "no task").
 */
export interface StateGuard {
  expectedTaskState?: readonly (string | null)[];
  expectedVmState?: readonly VmStateName[];
  /**
   * Beyond Nova: the build attempt the caller acts on. The cell conductor's retry (from the
   * compute's failure cast) and its build-deadline watchdog may both try to move a build on;
   * guarding on the attempt makes exactly one of them succeed.
   */
  expectedBuildAttempt?: number;
  /** Beyond Nova: the host the caller believes the instance is on (`null` = none). */
  expectedHost?: string | null;
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
  | { readonly kind: 'unexpected_vm_state'; readonly instance: InstanceRecord }
  | { readonly kind: 'unexpected_build_attempt'; readonly instance: InstanceRecord }
  | { readonly kind: 'unexpected_host'; readonly instance: InstanceRecord };

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
  // NOTE: stored as createInstance stores `flavor` (every field, camelCase), so SQL reads one shape
  flavor: ['flavor', (v: Flavor) => JSON.stringify(v)],
  oldFlavor: ['old_flavor', (v: Flavor | null) => (v === null ? null : JSON.stringify(v))],
  newFlavor: ['new_flavor', (v: Flavor | null) => (v === null ? null : JSON.stringify(v))],
  imageRef: ['image_ref', (v: string | null) => v],
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

/** Which part of the guard the current row fails, or undefined if it holds now. Pure. */
type Mismatch = Exclude<UpdateInstanceResult['kind'], 'updated' | 'not_found'>;

function mismatch(current: InstanceRecord, guard: StateGuard): Mismatch | undefined {
  if (guard.expectedTaskState !== undefined && !guard.expectedTaskState.includes(current.taskState)) return 'unexpected_task_state';
  if (guard.expectedVmState !== undefined && !guard.expectedVmState.includes(current.vmState)) return 'unexpected_vm_state';
  if (guard.expectedBuildAttempt !== undefined && guard.expectedBuildAttempt !== current.buildAttempt) return 'unexpected_build_attempt';
  if (guard.expectedHost !== undefined && guard.expectedHost !== current.host) return 'unexpected_host';
  return undefined;
}

function checkChanges(changes: InstanceChanges): void {
  if (changes.buildAttempt !== undefined && (!Number.isSafeInteger(changes.buildAttempt) || changes.buildAttempt < 1)) {
    throw new CellDbError('cell_db.instance.invalid', 'build_attempt must be an integer >= 1');
  }
}

/**
 * Updates a live instance if the guard holds, atomically (one UPDATE ... WHERE state matches).
 * Safe to retry: with a guard, a retry after success reports `unexpected_*` and changes nothing.
 * Without a guard it is a plain last-writer-wins update. Deleted instances are `not_found`.
 */
export async function updateInstance(
  db: Queryable,
  uuid: string,
  changes: InstanceChanges,
  guard: StateGuard = {},
): Promise<UpdateInstanceResult> {
  const id = checkUuid(uuid, 'instance uuid');
  checkChanges(changes);
  const tasks = guard.expectedTaskState;
  // NOTE: NULL never matches = ANY() or =, so "no task" / "no host" travel as their own flags.
  const values: unknown[] = [
    id,
    tasks?.filter((t) => t !== null) ?? null,
    tasks?.includes(null) ?? false,
    guard.expectedVmState ?? null,
    guard.expectedBuildAttempt ?? null,
    guard.expectedHost !== undefined,
    guard.expectedHost ?? null,
  ];
  const r = await db.query<InstanceRow>(
    `UPDATE instances SET ${setClause(changes, values)}
     WHERE uuid = $1 AND deleted_at IS NULL
       AND ($2::text[] IS NULL OR task_state = ANY($2) OR (task_state IS NULL AND $3))
       AND ($4::text[] IS NULL OR vm_state = ANY($4)) AND ($5::int IS NULL OR build_attempt = $5)
       AND (NOT $6 OR host IS NOT DISTINCT FROM $7::text) RETURNING ${INSTANCE_COLUMNS}`,
    values,
  );
  if (r.rows[0] !== undefined) return { kind: 'updated', instance: toInstanceRecord(r.rows[0]) };
  const current = await getInstance(db, id);
  if (current === undefined) return { kind: 'not_found' };
  // If the guard holds on the re-read, the row changed between the UPDATE and the read: a lost race.
  return { kind: mismatch(current, guard) ?? 'unexpected_task_state', instance: current };
}

/** What {@link activateBuild} did: `undefined` when it activated nothing. */
export interface BuildActivation {
  readonly userId: string;
  readonly projectId: string;
  /** The event was recorded in the same statement (false: no request id, or the action was not visible to it). */
  readonly eventRecorded: boolean;
}

/**
 * A build's success in ONE statement (one round trip, its own commit): the live row goes ACTIVE
 * (no task, running, the node, launched_at, host list and deadline cleared) only while it is
 * building `attempt` on `host`, and in the same statement the create action's event is recorded
 * finished with Success (the action started if missing, as {@link startActionAndFinishEvent}).
 * `undefined`: the row is gone, elsewhere, in another attempt or settled, and nothing changed
 * (the caller judges it under the row lock). Idempotent: a repeat activates nothing.
 */
export async function activateBuild(db: Queryable, b: BuildSuccess): Promise<BuildActivation | undefined> {
  const [done] = await activateBuilds(db, [b]);
  return done;
}

/** A build's success, as {@link activateBuild} applies it. */
export interface BuildSuccess {
  readonly uuid: string;
  readonly host: string;
  readonly attempt: number;
  /** '' keeps the row's node. */
  readonly node: string;
  readonly launchedAt: Date;
  /** The create's request id; '' records no event. */
  readonly requestId: string;
  readonly event: string;
}

/**
 * {@link activateBuild} for several builds in ONE statement (the cell conductor's group commit):
 * per build, in order, what it activated. A build named twice activates once at most (its first
 * occurrence is answered), as two calls would.
 *
 * NOTE: the rows are found by uuid (`= ANY`, so the planner knows how many), and the `building`
 * guard comes from the rows, not the text: written as a constant, it let the planner use the
 * partial index of building instances (`instances_build_deadline_idx`) and read every building
 * row on each call, a cost that grew with the backlog (3,000 building rows: 4.9 ms a call for 4
 * builds, 10.5 ms a call measured at 150 builds/s; by uuid: a lookup per build).
 */
export async function activateBuilds(db: Queryable, builds: readonly BuildSuccess[]): Promise<(BuildActivation | undefined)[]> {
  const rows = builds.map((b) => ({
    u: checkUuid(b.uuid, 'instance uuid'),
    h: b.host,
    a: b.attempt,
    n: b.node,
    la: b.launchedAt.toISOString(),
    rq: b.requestId,
    ev: b.event,
    vs: 'building',
  }));
  if (rows.length === 0) return [];
  const r = await db.query<{ u: string; h: string; a: number; user_id: string; project_id: string; recorded: boolean }>(
    `WITH t AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(u uuid, h text, a int, n text, la timestamptz, rq text, ev text, vs text)),
     act AS (UPDATE instances i SET updated_at = now(), vm_state = 'active', task_state = NULL, power_state = 1,
         node = coalesce(nullif(t.n, ''), i.node), launched_at = t.la, build_host_list = '[]', build_deadline_at = NULL
       FROM t WHERE i.uuid = ANY($2::uuid[]) AND i.uuid = t.u AND i.deleted_at IS NULL AND i.vm_state = t.vs AND i.host = t.h AND i.build_attempt = t.a
       RETURNING i.uuid, i.user_id, i.project_id, t.h, t.a, t.rq, t.ev),
     ins AS (INSERT INTO instance_actions (instance_uuid, request_id, action, user_id, project_id, start_time)
       SELECT uuid, rq, 'create', user_id, project_id, now() FROM act WHERE rq <> ''
       ON CONFLICT (instance_uuid, request_id) DO NOTHING RETURNING id, instance_uuid),
     upd AS (UPDATE instance_actions ia SET updated_at = now()
       FROM act WHERE ia.instance_uuid = act.uuid AND ia.request_id = act.rq RETURNING ia.id, ia.instance_uuid),
     aid AS (SELECT id, instance_uuid FROM ins UNION ALL SELECT id, instance_uuid FROM upd),
     e AS (INSERT INTO instance_actions_events (action_id, event, host, finish_time, result)
       SELECT aid.id, act.ev, act.h, now(), 'Success' FROM aid JOIN act ON act.uuid = aid.instance_uuid ${EVENT_UPSERT})
     SELECT act.uuid::text AS u, act.h, act.a, user_id, project_id, EXISTS (SELECT 1 FROM aid WHERE aid.instance_uuid = act.uuid) AS recorded FROM act`,
    [JSON.stringify(rows), rows.map((x) => x.u)],
  );
  // NOTE: keyed by the build (instance, host, attempt): of two reports of one instance in a batch, the one that matched is answered
  const key = (u: string, h: string, a: number): string => `${u} ${h} ${a}`;
  const done = new Map(r.rows.map((x) => [key(x.u, x.h, x.a), { userId: x.user_id, projectId: x.project_id, eventRecorded: x.recorded }]));
  return rows.map((x) => {
    const k = key(x.u, x.h, x.a);
    const d = done.get(k);
    done.delete(k);
    return d;
  });
}
