import { CellDbError, checkUuid, type Queryable } from './db';

/** Nova's action names (nova/compute/instance_actions.py) used by the boot flow. */
export const InstanceActionName = { CREATE: 'create', DELETE: 'delete' } as const;
/** Nova's event results. */
export const EVENT_SUCCESS = 'Success';
export const EVENT_ERROR = 'Error';
/** Nova's event of a compute's build on one host (recorded by whoever learns its outcome). */
export const EVENT_COMPUTE_BUILD = 'compute__do_build_and_run_instance';

/** One step of an action (os-instance-actions events). */
export interface InstanceActionEvent {
  readonly event: string;
  readonly startTime: Date;
  readonly finishTime: Date | null;
  readonly result: string | null;
  readonly traceback: string | null;
  readonly host: string | null;
  readonly details: string | null;
}

/** Nova's InstanceAction: one user request on one instance, with its events. */
export interface InstanceAction {
  readonly id: number;
  readonly action: string;
  readonly instanceUuid: string;
  readonly requestId: string;
  readonly userId: string | null;
  readonly projectId: string | null;
  readonly startTime: Date;
  readonly finishTime: Date | null;
  /** `Error` once an event failed (Nova's convention), else null. */
  readonly message: string | null;
  readonly events: readonly InstanceActionEvent[];
}

interface Row {
  id: string;
  action: string;
  instance_uuid: string;
  request_id: string;
  user_id: string | null;
  project_id: string | null;
  start_time: Date;
  finish_time: Date | null;
  message: string | null;
  events: {
    event: string;
    start_time: string;
    finish_time: string | null;
    result: string | null;
    traceback: string | null;
    host: string | null;
    details: string | null;
  }[];
}

function toAction(r: Row): InstanceAction {
  return {
    id: Number(r.id),
    action: r.action,
    instanceUuid: r.instance_uuid,
    requestId: r.request_id,
    userId: r.user_id,
    projectId: r.project_id,
    startTime: r.start_time,
    finishTime: r.finish_time,
    message: r.message,
    events: r.events.map((e) => ({
      event: e.event,
      startTime: new Date(e.start_time),
      finishTime: e.finish_time === null ? null : new Date(e.finish_time),
      result: e.result,
      traceback: e.traceback,
      host: e.host,
      details: e.details,
    })),
  };
}

const SELECT = `SELECT a.id, a.action, a.instance_uuid, a.request_id, a.user_id, a.project_id, a.start_time, a.finish_time, a.message,
  coalesce((SELECT jsonb_agg(jsonb_build_object('event', e.event, 'start_time', e.start_time, 'finish_time', e.finish_time,
    'result', e.result, 'traceback', e.traceback, 'host', e.host, 'details', e.details) ORDER BY e.start_time, e.id)
    FROM instance_actions_events e WHERE e.action_id = a.id), '[]'::jsonb) AS events
  FROM instance_actions a`;

export interface NewInstanceAction {
  instanceUuid: string;
  requestId: string;
  action: string;
  userId?: string | null;
  projectId?: string | null;
  startTime?: Date;
}

/**
 * Records the start of an action (Nova's InstanceAction.action_start). Idempotent per
 * (instance, request id): a repeat changes nothing and `created` is false.
 */
export async function startInstanceAction(db: Queryable, a: NewInstanceAction): Promise<{ id: number; created: boolean }> {
  if (a.requestId === '' || a.action === '')
    throw new CellDbError('cell_db.instance_action.invalid', 'request_id and action must not be empty');
  const uuid = checkUuid(a.instanceUuid, 'instance uuid');
  const r = await db.query<{ id: string; created: boolean }>(
    `WITH i AS (INSERT INTO instance_actions (instance_uuid, request_id, action, user_id, project_id, start_time)
       VALUES ($1, $2, $3, $4, $5, coalesce($6, now())) ON CONFLICT (instance_uuid, request_id) DO NOTHING RETURNING id)
     SELECT id, true AS created FROM i
     UNION ALL SELECT id, false FROM instance_actions WHERE instance_uuid = $1 AND request_id = $2 AND NOT EXISTS (SELECT 1 FROM i)`,
    [uuid, a.requestId, a.action, a.userId ?? null, a.projectId ?? null, a.startTime ?? null],
  );
  const row = r.rows[0];
  if (row === undefined) throw new CellDbError('cell_db.instance_action.race', `action ${a.requestId} on ${uuid} not found after insert`);
  return { id: Number(row.id), created: row.created };
}

/** @internal An event's finish written over its start or an earlier finish (per action, event and host). */
export const EVENT_UPSERT = `ON CONFLICT (action_id, event, (coalesce(host, ''))) DO UPDATE SET finish_time = coalesce(instance_actions_events.finish_time, EXCLUDED.finish_time),
         result = EXCLUDED.result, traceback = EXCLUDED.traceback, details = EXCLUDED.details, updated_at = now()`;

/** Marks an action finished (Nova's action_finish). Idempotent. Returns false if the action does not exist. */
export async function finishInstanceAction(db: Queryable, instanceUuid: string, requestId: string, finishTime?: Date): Promise<boolean> {
  const r = await db.query(
    `UPDATE instance_actions SET finish_time = coalesce(finish_time, $3, now()), updated_at = now() WHERE instance_uuid = $1 AND request_id = $2`,
    [checkUuid(instanceUuid, 'instance uuid'), requestId, finishTime ?? null],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Identifies an event: the action (instance + request id), the event name and the host it ran on. */
export interface EventKey {
  instanceUuid: string;
  requestId: string;
  /** Nova's names, e.g. `conductor_schedule_and_build_instances`, `compute__do_build_and_run_instance`. */
  event: string;
  host: string | null;
}

/**
 * Records the start of an event (Nova's InstanceActionEvent.event_start). Idempotent per
 * (action, event, host): a redelivered step records nothing new; a reschedule to another
 * host is a new event. Returns false if nothing new was written, undefined if the action
 * does not exist.
 */
export async function startActionEvent(db: Queryable, key: EventKey, startTime?: Date): Promise<boolean | undefined> {
  const r = await db.query<{ inserted: boolean }>(
    `WITH a AS (SELECT id FROM instance_actions WHERE instance_uuid = $1 AND request_id = $2),
     e AS (INSERT INTO instance_actions_events (action_id, event, host, start_time) SELECT id, $3, $4, coalesce($5, now()) FROM a
       ON CONFLICT (action_id, event, (coalesce(host, ''))) DO NOTHING RETURNING id)
     SELECT EXISTS (SELECT 1 FROM e) AS inserted FROM a`,
    [checkUuid(key.instanceUuid, 'instance uuid'), key.requestId, key.event, key.host, startTime ?? null],
  );
  return r.rows[0]?.inserted;
}

/**
 * Records the end of an event (Nova's event_finish_with_failure): result `Success` or
 * `Error`, with traceback/details on error; an `Error` also sets the action's message to
 * `Error`. Creates the event if its start was never recorded (a crash in between).
 * Idempotent: repeating it keeps the first finish time. Returns false if the action does not exist.
 */
export async function finishActionEvent(
  db: Queryable,
  key: EventKey,
  outcome: { result: typeof EVENT_SUCCESS | typeof EVENT_ERROR; traceback?: string; details?: string },
): Promise<boolean> {
  if (outcome.result !== EVENT_SUCCESS && outcome.result !== EVENT_ERROR)
    throw new CellDbError('cell_db.instance_action.invalid', 'result must be Success or Error');
  const r = await db.query(
    `WITH a AS (UPDATE instance_actions SET message = CASE WHEN $5 = 'Error' THEN 'Error' ELSE message END, updated_at = now()
       WHERE instance_uuid = $1 AND request_id = $2 RETURNING id),
     e AS (INSERT INTO instance_actions_events (action_id, event, host, finish_time, result, traceback, details)
       SELECT id, $3, $4, now(), $5, $6, $7 FROM a ${EVENT_UPSERT})
     SELECT id FROM a`,
    [
      checkUuid(key.instanceUuid, 'instance uuid'),
      key.requestId,
      key.event,
      key.host,
      outcome.result,
      outcome.traceback ?? null,
      outcome.details ?? null,
    ],
  );
  return r.rows.length > 0;
}

/** Actions of an instance with their events, newest first (os-instance-actions). Read-only. */
export async function listInstanceActions(db: Queryable, instanceUuid: string): Promise<InstanceAction[]> {
  const r = await db.query<Row>(`${SELECT} WHERE a.instance_uuid = $1 ORDER BY a.start_time DESC, a.id DESC`, [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows.map(toAction);
}

/** One action with its events, or undefined. Read-only. */
export async function getInstanceAction(db: Queryable, instanceUuid: string, requestId: string): Promise<InstanceAction | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE a.instance_uuid = $1 AND a.request_id = $2`, [
    checkUuid(instanceUuid, 'instance uuid'),
    requestId,
  ]);
  return r.rows[0] === undefined ? undefined : toAction(r.rows[0]);
}

/**
 * {@link startInstanceAction} then {@link finishActionEvent}, in ONE statement (one round trip):
 * the action is started if missing, then the event recorded finished. Idempotent as the two.
 * Returns false only if the action could not be seen (a concurrent first start not yet visible to
 * this statement's snapshot); the caller then falls back to the two statements.
 */
export async function startActionAndFinishEvent(
  db: Queryable,
  a: NewInstanceAction,
  key: Omit<EventKey, 'instanceUuid' | 'requestId'>,
  outcome: { result: typeof EVENT_SUCCESS | typeof EVENT_ERROR; traceback?: string; details?: string },
): Promise<boolean> {
  if (a.requestId === '' || a.action === '')
    throw new CellDbError('cell_db.instance_action.invalid', 'request_id and action must not be empty');
  if (outcome.result !== EVENT_SUCCESS && outcome.result !== EVENT_ERROR)
    throw new CellDbError('cell_db.instance_action.invalid', 'result must be Success or Error');
  const r = await db.query(
    `WITH ins AS (INSERT INTO instance_actions (instance_uuid, request_id, action, user_id, project_id, start_time, message)
       VALUES ($1, $2, $3, $4, $5, coalesce($6, now()), CASE WHEN $9 = 'Error' THEN 'Error' END)
       ON CONFLICT (instance_uuid, request_id) DO NOTHING RETURNING id),
     upd AS (UPDATE instance_actions SET message = CASE WHEN $9 = 'Error' THEN 'Error' ELSE message END, updated_at = now()
       WHERE instance_uuid = $1 AND request_id = $2 RETURNING id),
     aid AS (SELECT id FROM ins UNION ALL SELECT id FROM upd),
     e AS (INSERT INTO instance_actions_events (action_id, event, host, finish_time, result, traceback, details)
       SELECT id, $7, $8, now(), $9, $10, $11 FROM aid ${EVENT_UPSERT})
     SELECT id FROM aid`,
    [
      checkUuid(a.instanceUuid, 'instance uuid'),
      a.requestId,
      a.action,
      a.userId ?? null,
      a.projectId ?? null,
      a.startTime ?? null,
      key.event,
      key.host,
      outcome.result,
      outcome.traceback ?? null,
      outcome.details ?? null,
    ],
  );
  return r.rows.length > 0;
}
