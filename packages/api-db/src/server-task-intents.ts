import { checkUuid, type Queryable } from './db';

/** A server action the API accepted and the super-conductor has not applied yet (`server_task_intents`). */
export interface ServerTaskIntent {
  readonly instanceUuid: string;
  readonly action: string;
  /** Null for an action that sets no task_state (confirmResize). */
  readonly taskState: string | null;
  readonly requestId: string;
  /** The wire ServerActionRequest as JSON (`ServerActionRequest.toJSON`). */
  readonly request: unknown;
  readonly traceParent: string | null;
  readonly createdAt: Date;
}

interface Row {
  instance_uuid: string;
  action: string;
  task_state: string | null;
  request_id: string;
  request: unknown;
  trace_parent: string | null;
  created_at: Date;
}
const toIntent = (r: Row): ServerTaskIntent => ({
  instanceUuid: r.instance_uuid,
  action: r.action,
  taskState: r.task_state,
  requestId: r.request_id,
  request: r.request,
  traceParent: r.trace_parent,
  createdAt: r.created_at,
});
const COLUMNS = 'instance_uuid, action, task_state, request_id, request, trace_parent, created_at';

export interface NewServerTaskIntent {
  instanceUuid: string;
  action: string;
  taskState: string | null;
  requestId: string;
  request: unknown;
  traceParent?: string | null;
}

/**
 * Records the intent unless the server already has one. Returns `{ recorded: true }`, or
 * `{ recorded: false, existing }` with the intent that is in the way (the caller answers 409;
 * a repeat of the same request id is `recorded: true`, idempotent).
 */
export async function recordServerTaskIntent(
  db: Queryable,
  i: NewServerTaskIntent,
): Promise<{ recorded: true } | { recorded: false; existing: ServerTaskIntent }> {
  const uuid = checkUuid(i.instanceUuid, 'instance uuid');
  const r = await db.query(
    `INSERT INTO server_task_intents (instance_uuid, action, task_state, request_id, request, trace_parent)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (instance_uuid) DO NOTHING`,
    [uuid, i.action, i.taskState, i.requestId, JSON.stringify(i.request), i.traceParent ?? null],
  );
  if ((r.rowCount ?? 0) > 0) return { recorded: true };
  const existing = await getServerTaskIntent(db, uuid);
  if (existing === undefined) return recordServerTaskIntent(db, i); // NOTE: cleared meanwhile: try again.
  if (existing.requestId === i.requestId) return { recorded: true };
  return { recorded: false, existing };
}

/** The server's pending intent, or undefined. Read-only. */
export async function getServerTaskIntent(db: Queryable, instanceUuid: string): Promise<ServerTaskIntent | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM server_task_intents WHERE instance_uuid = $1`, [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows[0] === undefined ? undefined : toIntent(r.rows[0]);
}

/** The pending intents of these servers, by instance uuid (the server list's overlay). Read-only. */
export async function getServerTaskIntents(db: Queryable, instanceUuids: readonly string[]): Promise<Map<string, ServerTaskIntent>> {
  if (instanceUuids.length === 0) return new Map();
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM server_task_intents WHERE instance_uuid = ANY($1::uuid[])`, [instanceUuids]);
  return new Map(r.rows.map((row) => [row.instance_uuid, toIntent(row)]));
}

/**
 * Every pending intent, by instance uuid (the server list reads them BEFORE the cells: an intent
 * is cleared only after its cell holds the state, so a list read in this order never misses
 * both). The table holds only actions in flight. Read-only.
 */
export async function listServerTaskIntents(db: Queryable): Promise<Map<string, ServerTaskIntent>> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM server_task_intents`);
  return new Map(r.rows.map((row) => [row.instance_uuid, toIntent(row)]));
}

/** Deletes the intent of this request (another request's intent is kept). Returns whether one was deleted. Idempotent. */
export async function clearServerTaskIntent(db: Queryable, instanceUuid: string, requestId: string): Promise<boolean> {
  const r = await db.query('DELETE FROM server_task_intents WHERE instance_uuid = $1 AND request_id = $2', [
    checkUuid(instanceUuid, 'instance uuid'),
    requestId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** Intents older than `olderThanMs` (their cast may be lost: the sweeper re-casts them), oldest first. Read-only. */
export async function listStaleServerTaskIntents(db: Queryable, olderThanMs: number, limit = 100): Promise<ServerTaskIntent[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM server_task_intents WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
     ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return r.rows.map(toIntent);
}
