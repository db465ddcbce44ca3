import { RequestSpec, Selection, type Flavor } from '@cellsched/wire';
import { CellDbError, checkUuid, checkUuids, type Queryable } from './db';
import { EVENT_UPSERT } from './instance-actions';
import { hostListJson, INSTANCE_COLUMNS, toInstanceRecord, type InstanceRecord, type InstanceRow } from './instance-record';
import type { VmStateName } from './vm-states';

export interface NewInstance {
  uuid: string;
  projectId: string;
  userId: string;
  displayName?: string | null;
  hostname?: string | null;
  flavor: Flavor;
  imageRef?: string | null;
  vmState: VmStateName;
  taskState?: string | null;
  host?: string | null;
  node?: string | null;
  availabilityZone?: string | null;
  reservationId?: string | null;
  launchIndex?: number;
  buildHostList?: readonly Selection[];
  buildRequestSpec?: RequestSpec;
  buildDeadlineAt?: Date | null;
  /** W3C traceparent of the create (DESIGN: one trace per create, reschedules included); written once, read by the watchdog. */
  traceParent?: string | null;
}

function validate(i: NewInstance): void {
  const problems: string[] = [];
  if (i.projectId === '') problems.push('project_id must not be empty');
  if (i.userId === '') problems.push('user_id must not be empty');
  if (i.launchIndex !== undefined && (!Number.isSafeInteger(i.launchIndex) || i.launchIndex < 0))
    problems.push('launch_index must be a non-negative integer');
  if (problems.length > 0) throw new CellDbError('cell_db.instance.invalid', `invalid instance: ${problems.join('; ')}`);
}

/**
 * Creates the instance (the super-conductor does, in the chosen cell or cell0). Idempotent
 * per uuid: if the instance already exists (a redelivered message) nothing is changed and
 * `created` is false; the existing row is returned, deleted or not, so the caller can see
 * where the first delivery got. Bad input throws `cell_db.instance.invalid`.
 */
export async function createInstance(db: Queryable, i: NewInstance): Promise<{ instance: InstanceRecord; created: boolean }> {
  validate(i);
  const uuid = checkUuid(i.uuid, 'instance uuid');
  const r = await db.query<InstanceRow>(`${INSERT_INSTANCE} RETURNING ${INSTANCE_COLUMNS}`, insertParams(uuid, i));
  return createdOrExisting(db, uuid, r.rows[0]);
}

/** The INSERT of a new instance ($1..$18 as {@link insertParams}), ON CONFLICT DO NOTHING; without RETURNING. */
const INSERT_INSTANCE = `INSERT INTO instances (uuid, project_id, user_id, display_name, hostname, flavor, image_ref, vm_state, task_state, host, node,
       availability_zone, reservation_id, launch_index, build_host_list, build_request_spec, build_deadline_at, trace_parent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
     ON CONFLICT (uuid) DO NOTHING`;

function insertParams(uuid: string, i: NewInstance): unknown[] {
  return [
    uuid,
    i.projectId,
    i.userId,
    i.displayName ?? null,
    i.hostname ?? null,
    JSON.stringify(i.flavor),
    i.imageRef ?? null,
    i.vmState,
    i.taskState ?? null,
    i.host ?? null,
    i.node ?? null,
    i.availabilityZone ?? null,
    i.reservationId ?? null,
    i.launchIndex ?? 0,
    hostListJson(i.buildHostList ?? []),
    i.buildRequestSpec === undefined ? null : JSON.stringify(RequestSpec.toJSON(i.buildRequestSpec)),
    i.buildDeadlineAt ?? null,
    i.traceParent ?? null,
  ];
}

/** The row an INSERT returned (created), else the existing one, deleted or not (a repeat). */
async function createdOrExisting(
  db: Queryable,
  uuid: string,
  inserted: InstanceRow | undefined,
): Promise<{ instance: InstanceRecord; created: boolean }> {
  if (inserted !== undefined) return { instance: toInstanceRecord(inserted), created: true };
  const existing = await getInstance(db, uuid, { includeDeleted: true });
  if (existing === undefined) throw new CellDbError('cell_db.instance.race', `instance ${uuid} vanished during create`);
  return { instance: existing, created: false };
}

/** The action a {@link createInstanceWithAction} starts, and the event it records finished with Success. */
export interface CreatedAction {
  readonly requestId: string;
  /** Nova's action name (`create`). */
  readonly action: string;
  /** Nova's event name (`conductor_schedule_and_build_instances`). */
  readonly event: string;
  readonly host: string | null;
}

/**
 * {@link createInstance} with the instance's action started and one event of it finished with
 * Success, in ONE statement (one round trip; atomic without an explicit transaction), as the
 * super-conductor's step 4 writes them. Idempotent: a second call changes nothing but the event's
 * finish details (as `finishActionEvent`), and returns the existing row with `created` false.
 */
export async function createInstanceWithAction(
  db: Queryable,
  i: NewInstance,
  a: CreatedAction,
): Promise<{ instance: InstanceRecord; created: boolean }> {
  const [one] = await createInstancesWithActions(db, [{ instance: i, action: a }]);
  return one as { instance: InstanceRecord; created: boolean };
}

/** One instance and the action its creation starts ({@link createInstancesWithActions}). */
export interface NewInstanceWithAction {
  readonly instance: NewInstance;
  readonly action: CreatedAction;
}

/** Throws `cell_db.instance.invalid` / `cell_db.instance_action.invalid` on what {@link createInstancesWithActions} would refuse; returns the checked uuid. */
export function checkInstanceWithAction({ instance: i, action: a }: NewInstanceWithAction): string {
  validate(i);
  if (a.requestId === '' || a.action === '' || a.event === '')
    throw new CellDbError('cell_db.instance_action.invalid', 'request_id, action and event must not be empty');
  return checkUuid(i.uuid, 'instance uuid');
}

/**
 * {@link createInstanceWithAction} for several instances in ONE statement (the super-conductor's
 * group commit): per item, in order, the created row or the existing one (`created` false).
 * Rows are inserted in the order given. NOTE: one instance twice in a batch makes the event's
 * upsert touch one row twice, which PostgreSQL refuses: the statement fails and its caller
 * (a group commit) writes each item alone.
 */
export async function createInstancesWithActions(
  db: Queryable,
  items: readonly NewInstanceWithAction[],
): Promise<{ instance: InstanceRecord; created: boolean }[]> {
  const rows = items.map((x, o) => {
    const uuid = checkInstanceWithAction(x);
    const { instance: i, action: a } = x;
    return {
      o,
      u: uuid,
      p: i.projectId,
      us: i.userId,
      dn: i.displayName ?? null,
      hn: i.hostname ?? null,
      fl: i.flavor,
      img: i.imageRef ?? null,
      vs: i.vmState,
      ts: i.taskState ?? null,
      h: i.host ?? null,
      n: i.node ?? null,
      az: i.availabilityZone ?? null,
      rid: i.reservationId ?? null,
      li: i.launchIndex ?? 0,
      bhl: (i.buildHostList ?? []).map((s) => Selection.toJSON(s)),
      brs: i.buildRequestSpec === undefined ? null : RequestSpec.toJSON(i.buildRequestSpec),
      dl: i.buildDeadlineAt?.toISOString() ?? null,
      tp: i.traceParent ?? null,
      rq: a.requestId,
      ac: a.action,
      ev: a.event,
      eh: a.host,
    };
  });
  if (rows.length === 0) return [];
  const r = await db.query<InstanceRow>(
    `WITH t AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(o int, u uuid, p text, us text, dn text, hn text, fl jsonb, img text,
         vs text, ts text, h text, n text, az text, rid text, li int, bhl jsonb, brs jsonb, dl timestamptz, tp text, rq text, ac text, ev text, eh text)),
     ins AS (INSERT INTO instances (uuid, project_id, user_id, display_name, hostname, flavor, image_ref, vm_state, task_state, host, node,
         availability_zone, reservation_id, launch_index, build_host_list, build_request_spec, build_deadline_at, trace_parent)
       SELECT u, p, us, dn, hn, fl, img, vs, ts, h, n, az, rid, li, bhl, brs, dl, tp FROM t ORDER BY o
       ON CONFLICT (uuid) DO NOTHING RETURNING ${INSTANCE_COLUMNS}),
     a AS (INSERT INTO instance_actions (instance_uuid, request_id, action, user_id, project_id, start_time)
       SELECT u, rq, ac, us, p, now() FROM t ORDER BY o ON CONFLICT (instance_uuid, request_id) DO NOTHING RETURNING id, instance_uuid),
     aid AS (SELECT id, instance_uuid FROM a UNION ALL SELECT ia.id, ia.instance_uuid FROM instance_actions ia JOIN t ON ia.instance_uuid = t.u
       AND ia.request_id = t.rq WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.instance_uuid = t.u)),
     e AS (INSERT INTO instance_actions_events (action_id, event, host, finish_time, result, traceback, details)
       SELECT aid.id, t.ev, t.eh, now(), 'Success', NULL, NULL FROM aid JOIN t ON t.u = aid.instance_uuid ${EVENT_UPSERT})
     SELECT * FROM ins`,
    [JSON.stringify(rows)],
  );
  const created = new Map(r.rows.map((x) => [x.uuid, toInstanceRecord(x)]));
  const repeats = rows.filter((x) => !created.has(x.u)).map((x) => x.u);
  const existing =
    repeats.length === 0
      ? new Map<string, InstanceRecord>()
      : new Map(
          (await db.query<InstanceRow>(`SELECT ${INSTANCE_COLUMNS} FROM instances WHERE uuid = ANY($1::uuid[])`, [repeats])).rows.map(
            (x) => [x.uuid, toInstanceRecord(x)],
          ),
        );
  return rows.map((x) => {
    const made = created.get(x.u);
    if (made !== undefined) return { instance: made, created: true };
    const found = existing.get(x.u);
    if (found === undefined) throw new CellDbError('cell_db.instance.race', `instance ${x.u} vanished during create`);
    return { instance: found, created: false };
  });
}

/**
 * The instance, or undefined (Nova's InstanceNotFound). Deleted ones only with `includeDeleted`.
 * Read-only; `forUpdate` also takes its row lock (`SELECT … FOR UPDATE`, in the caller's
 * transaction), reading and locking in one round trip.
 */
export async function getInstance(
  db: Queryable,
  uuid: string,
  opts: { includeDeleted?: boolean; forUpdate?: boolean } = {},
): Promise<InstanceRecord | undefined> {
  const r = await db.query<InstanceRow>(
    `SELECT ${INSTANCE_COLUMNS} FROM instances WHERE uuid = $1 AND ($2 OR deleted_at IS NULL)${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
    [checkUuid(uuid, 'instance uuid'), opts.includeDeleted ?? false],
  );
  return r.rows[0] === undefined ? undefined : toInstanceRecord(r.rows[0]);
}

export interface ListInstancesOptions {
  projectId?: string;
  uuids?: readonly string[];
  host?: string;
  vmStates?: readonly VmStateName[];
  includeDeleted?: boolean;
  /** Only instances updated at or after this time (Nova's changes-since). */
  changesSince?: Date;
  /** Only instances updated at or before this time (Nova's changes-before). */
  changesBefore?: Date;
  /**
   * Key-set pagination (Nova's marker): only instances sorting after this one. Works across
   * cells because the order (created_at desc, uuid desc) is total and the same in every cell.
   */
  after?: { readonly createdAt: Date; readonly uuid: string };
  limit?: number;
  /**
   * Only instances whose display name matches this PostgreSQL regular expression anywhere
   * (`~`, as Nova's `_regex_instance_filter` on PostgreSQL). An invalid pattern fails with
   * SQLSTATE 2201B; a costly one runs until the session's statement_timeout (57014).
   */
  displayNameRegex?: string;
}

/** Instances newest first (Nova's default sort: created_at desc, then uuid desc), filtered. Read-only. */
export async function listInstances(db: Queryable, opts: ListInstancesOptions = {}): Promise<InstanceRecord[]> {
  if (opts.limit !== undefined && (!Number.isSafeInteger(opts.limit) || opts.limit < 0))
    throw new CellDbError('cell_db.instance.invalid', 'limit must be a non-negative integer');
  const r = await db.query<InstanceRow>(
    `SELECT ${INSTANCE_COLUMNS} FROM instances
     WHERE ($1::text IS NULL OR project_id = $1) AND ($2::uuid[] IS NULL OR uuid = ANY($2)) AND ($3::text IS NULL OR host = $3)
       AND ($4::text[] IS NULL OR vm_state = ANY($4)) AND ($5 OR deleted_at IS NULL) AND ($6::timestamptz IS NULL OR updated_at >= $6)
       AND ($8::timestamptz IS NULL OR (created_at, uuid) < ($8, $9::uuid)) AND ($10::text IS NULL OR coalesce(display_name, '') ~ $10)
       AND ($11::timestamptz IS NULL OR updated_at <= $11)
     ORDER BY created_at DESC, uuid DESC LIMIT $7`,
    [
      opts.projectId ?? null,
      opts.uuids === undefined ? null : checkUuids(opts.uuids, 'instance uuid'),
      opts.host ?? null,
      opts.vmStates ?? null,
      opts.includeDeleted ?? false,
      opts.changesSince ?? null,
      opts.limit ?? null,
      opts.after?.createdAt ?? null,
      opts.after === undefined ? null : checkUuid(opts.after.uuid, 'marker uuid'),
      opts.displayNameRegex ?? null,
      opts.changesBefore ?? null,
    ],
  );
  return r.rows.map(toInstanceRecord);
}

/** What the allocation audit reads of an instance: whose it is, where, in which state. */
export type InstanceHolding = Pick<InstanceRecord, 'uuid' | 'projectId' | 'userId' | 'vmState' | 'host' | 'node' | 'deletedAt'>;

/**
 * The holdings of instances, in no order: those of `uuids` (deleted ones too with
 * `includeDeleted`), or of every live instance in `vmStates`. Read-only.
 *
 * NOTE: the audit's read of the whole cell, every pass: only these columns, no sort. Whole rows
 * (flavor, request spec, host list decoded each) of tens of thousands of instances, twice a pass,
 * held a cell conductor's event loop up to seconds, and the builds waiting on it (e2e bench).
 */
export async function listInstanceHoldings(
  db: Queryable,
  opts: { uuids?: readonly string[]; vmStates?: readonly VmStateName[]; includeDeleted?: boolean },
): Promise<InstanceHolding[]> {
  const r = await db.query<{
    uuid: string;
    project_id: string;
    user_id: string;
    vm_state: VmStateName;
    host: string | null;
    node: string | null;
    deleted_at: Date | null;
  }>(
    `SELECT uuid::text, project_id, user_id, vm_state, host, node, deleted_at FROM instances
     WHERE ($1::uuid[] IS NULL OR uuid = ANY($1)) AND ($2::text[] IS NULL OR vm_state = ANY($2)) AND ($3 OR deleted_at IS NULL)`,
    [opts.uuids === undefined ? null : checkUuids(opts.uuids, 'instance uuid'), opts.vmStates ?? null, opts.includeDeleted ?? false],
  );
  return r.rows.map((x) => ({
    uuid: x.uuid,
    projectId: x.project_id,
    userId: x.user_id,
    vmState: x.vm_state,
    host: x.host,
    node: x.node,
    deletedAt: x.deleted_at,
  }));
}

/**
 * Instances still `building` whose build deadline has passed (the cell conductor's watchdog),
 * oldest deadline first. Read-only; claim each with an `expectedTaskState` guarded update.
 */
export async function listInstancesPastBuildDeadline(db: Queryable, opts: { now?: Date; limit?: number } = {}): Promise<InstanceRecord[]> {
  const r = await db.query<InstanceRow>(
    `SELECT ${INSTANCE_COLUMNS} FROM instances
     WHERE vm_state = 'building' AND deleted_at IS NULL AND build_deadline_at < coalesce($1::timestamptz, now())
     ORDER BY build_deadline_at LIMIT $2`,
    [opts.now ?? null, opts.limit ?? 100],
  );
  return r.rows.map(toInstanceRecord);
}

/**
 * Soft-deletes the instance as Nova does (vm_state `deleted`, task_state NULL, deleted_at and
 * terminated_at set). Idempotent: returns whether it was live before.
 */
export async function softDeleteInstance(db: Queryable, uuid: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE instances SET vm_state = 'deleted', task_state = NULL, deleted_at = now(), updated_at = now(),
       terminated_at = coalesce(terminated_at, now()) WHERE uuid = $1 AND deleted_at IS NULL`,
    [checkUuid(uuid, 'instance uuid')],
  );
  return (r.rowCount ?? 0) > 0;
}

/**
 * Removes the instance row with its faults, actions and events (delete-during-build leaves
 * nothing behind). Idempotent: returns whether a row existed.
 */
export async function destroyInstance(db: Queryable, uuid: string): Promise<boolean> {
  const id = checkUuid(uuid, 'instance uuid');
  const r = await db.query<{ existed: boolean }>(
    `WITH a AS (DELETE FROM instance_actions WHERE instance_uuid = $1), i AS (DELETE FROM instances WHERE uuid = $1 RETURNING 1)
     SELECT EXISTS (SELECT 1 FROM i) AS existed`,
    [id],
  );
  return r.rows[0]?.existed === true;
}
