import { Instance, RequestSpec } from '@cellsched/wire';
import { ApiDbError, checkUuid, checkUuids, type Queryable } from './db';

/** Nova's BuildRequest: the server as the API shows it until it has a cell. */
export interface BuildRequest {
  readonly instanceUuid: string;
  readonly projectId: string;
  readonly instance: Instance;
  readonly createdAt: Date;
  /** The create's W3C traceparent (tracing on), so a re-cast stays in the create's trace. */
  readonly traceParent: string | undefined;
}

interface Row {
  instance_uuid: string;
  project_id: string;
  instance: unknown;
  created_at: Date;
  trace_parent: string | null;
}
/** @internal a build_requests row (its {@link BUILD_REQUEST_COLUMNS}) as a BuildRequest. */
export const toBuildRequest = (r: Row): BuildRequest => ({
  instanceUuid: r.instance_uuid,
  projectId: r.project_id,
  instance: Instance.fromJSON(r.instance),
  createdAt: r.created_at,
  traceParent: r.trace_parent ?? undefined,
});
const COLUMNS = 'instance_uuid, project_id, instance, created_at, trace_parent';
/** @internal */
export type BuildRequestRow = Row;
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Stores a build request for `instance.uuid`, with the create's W3C `traceParent` when tracing
 * is on. Idempotent: returns false (and changes nothing) if one already exists for that instance.
 */
export async function createBuildRequest(db: Queryable, instance: Instance, traceParent?: string): Promise<boolean> {
  const uuid = checkUuid(instance.uuid, 'instance uuid');
  if (instance.projectId === '') throw new ApiDbError('api_db.build_request.invalid', 'instance.projectId must not be empty');
  if (traceParent !== undefined && !TRACEPARENT.test(traceParent)) {
    throw new ApiDbError(
      'api_db.build_request.invalid',
      `traceParent ${JSON.stringify(traceParent)} is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)`,
    );
  }
  const r = await db.query(
    'INSERT INTO build_requests (instance_uuid, project_id, instance, trace_parent) VALUES ($1, $2, $3, $4) ON CONFLICT (instance_uuid) DO NOTHING',
    [uuid, instance.projectId, JSON.stringify(Instance.toJSON(instance)), traceParent ?? null],
  );
  return (r.rowCount ?? 0) > 0;
}

/** The build request of an instance, or undefined (Nova's BuildRequestNotFound). Read-only. */
export async function getBuildRequest(db: Queryable, instanceUuid: string): Promise<BuildRequest | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM build_requests WHERE instance_uuid = $1`, [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows[0] === undefined ? undefined : toBuildRequest(r.rows[0]);
}

/**
 * Build requests of a project (or all), oldest first. Read-only. `displayNameRegex`: only
 * those whose would-be instance's name matches this PostgreSQL regular expression anywhere
 * (`~`); an invalid pattern fails with SQLSTATE 2201B.
 */
export async function listBuildRequests(
  db: Queryable,
  opts: { projectId?: string; displayNameRegex?: string } = {},
): Promise<BuildRequest[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM build_requests WHERE ($1::text IS NULL OR project_id = $1)
       AND ($2::text IS NULL OR coalesce(instance->>'displayName', '') ~ $2) ORDER BY id`,
    [opts.projectId ?? null, opts.displayNameRegex ?? null],
  );
  return r.rows.map(toBuildRequest);
}

/**
 * Deletes the build request. Idempotent: returns whether it existed. Both the user's
 * delete and the super-conductor call it; whoever gets `true` won. The super-conductor
 * getting `false` means the user deleted the server while it was being scheduled, so it
 * must release the claim and clean up (Nova's BuildRequestNotFound on destroy).
 */
export async function deleteBuildRequest(db: Queryable, instanceUuid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM build_requests WHERE instance_uuid = $1', [checkUuid(instanceUuid, 'instance uuid')]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * The super-conductor's step 4 in the API database, in ONE statement: points the mapping at the
 * cell (Nova's `instance_mapping.cell_mapping = cell; save()`) and deletes the build request.
 * Returns whether this call deleted the build request: false means the user deleted the server
 * meanwhile (as {@link deleteBuildRequest}), and the caller cleans up. Idempotent.
 */
export async function mapToCellAndDeleteBuildRequest(db: Queryable, instanceUuid: string, cellId: number): Promise<boolean> {
  const [deleted] = await mapToCellsAndDeleteBuildRequests(db, [{ instanceUuid, cellId }]);
  return deleted ?? false;
}

/** An instance the super-conductor put in a cell: its mapping goes to `cellId`. */
export interface PlacedInstance {
  readonly instanceUuid: string;
  readonly cellId: number;
}

/**
 * {@link mapToCellAndDeleteBuildRequest} for several instances in ONE statement (the
 * super-conductor's group commit): per instance, in order, whether this call deleted its build
 * request. An instance named twice is answered true once at most (its first), as two calls would.
 */
export async function mapToCellsAndDeleteBuildRequests(db: Queryable, placed: readonly PlacedInstance[]): Promise<boolean[]> {
  const uuids = placed.map((p) => checkUuid(p.instanceUuid, 'instance uuid'));
  const cellIds = placed.map((p) => {
    if (!Number.isSafeInteger(p.cellId)) throw new ApiDbError('api_db.instance_mapping.invalid', `cell id ${p.cellId} is not an integer`);
    return p.cellId;
  });
  if (uuids.length === 0) return [];
  const r = await db.query<{ u: string }>(
    `WITH t AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS t(u, c)),
     m AS (UPDATE instance_mappings im SET cell_id = t.c, updated_at = now() FROM t WHERE im.instance_uuid = t.u)
     DELETE FROM build_requests b USING t WHERE b.instance_uuid = t.u RETURNING b.instance_uuid::text AS u`,
    [uuids, cellIds],
  );
  const deleted = new Set(r.rows.map((x) => x.u));
  return uuids.map((u) => deleted.delete(u));
}

/** Which of `instanceUuids` still have a build request (not scheduled to a cell yet). Read-only. */
export async function instancesWithBuildRequest(db: Queryable, instanceUuids: readonly string[]): Promise<Set<string>> {
  const r = await db.query<{ instance_uuid: string }>(
    'SELECT instance_uuid::text FROM build_requests WHERE instance_uuid = ANY($1::uuid[])',
    [checkUuids(instanceUuids, 'instance uuid')],
  );
  return new Set(r.rows.map((x) => x.instance_uuid));
}

/** One server of {@link createServerRecords}: its RequestSpec and its would-be instance. */
export interface NewServerRecord {
  readonly spec: RequestSpec;
  readonly instance: Instance;
}

/** Who a create's servers belong to, its trace and its server group. */
export interface ServerRecordsOptions {
  readonly projectId: string;
  readonly userId?: string;
  readonly traceParent?: string;
  readonly groupUuid?: string;
}

/** A create's records, checked and ready for {@link writeServerRecords}. */
export interface CheckedServerRecords {
  readonly rows: readonly {
    u: string;
    spec: unknown;
    inst: unknown;
    p: string;
    us: string | null;
    tp: string | null;
    g: string | null;
  }[];
}

/**
 * Checks a create's records (every server of `projectId`, its spec its own and with a flavor,
 * uuids and traceparent well formed) and shapes them for {@link writeServerRecords}; throws
 * ApiDbError on bad input. Pure.
 */
export function checkServerRecords(servers: readonly NewServerRecord[], o: ServerRecordsOptions): CheckedServerRecords {
  if (o.projectId === '') throw new ApiDbError('api_db.build_request.invalid', 'projectId must not be empty');
  if (o.traceParent !== undefined && !TRACEPARENT.test(o.traceParent)) {
    throw new ApiDbError(
      'api_db.build_request.invalid',
      `traceParent ${JSON.stringify(o.traceParent)} is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)`,
    );
  }
  const g = o.groupUuid === undefined ? null : checkUuid(o.groupUuid, 'server group uuid');
  const rows = servers.map(({ spec, instance }) => {
    const uuid = checkUuid(instance.uuid, 'instance uuid');
    if (spec.instanceUuid !== instance.uuid)
      throw new ApiDbError('api_db.build_request.invalid', `request spec ${spec.instanceUuid} is not instance ${uuid}'s`);
    if (instance.projectId !== o.projectId)
      throw new ApiDbError('api_db.build_request.invalid', `instance ${uuid} is not of project ${o.projectId}`);
    if (spec.flavor === undefined) throw new ApiDbError('api_db.request_spec.invalid', 'request spec must carry a flavor');
    return {
      u: uuid,
      spec: RequestSpec.toJSON(spec),
      inst: Instance.toJSON(instance),
      p: o.projectId,
      us: o.userId ?? null,
      tp: o.traceParent ?? null,
      g,
    };
  });
  return { rows };
}

/**
 * DESIGN boot step 1's writes of one or more creates, in ONE statement (atomic without an
 * explicit transaction: one round trip and one commit instead of BEGIN, three INSERTs per
 * server and COMMIT per create): per server its RequestSpec (replaced if present), its
 * BuildRequest and its InstanceMapping without a cell (both kept if present), and its
 * membership of its create's server group, if any. Idempotent. The same instance twice in one
 * call fails the whole statement (PostgreSQL's "cannot affect row a second time").
 */
export async function writeServerRecords(db: Queryable, creates: readonly CheckedServerRecords[]): Promise<void> {
  const rows = creates.flatMap((c) => c.rows);
  if (rows.length === 0) return;
  await db.query(
    `WITH t AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(u uuid, spec jsonb, inst jsonb, p text, us text, tp text, g uuid)),
     s AS (INSERT INTO request_specs (instance_uuid, spec) SELECT u, spec FROM t
       ON CONFLICT (instance_uuid) DO UPDATE SET spec = EXCLUDED.spec, updated_at = now()),
     b AS (INSERT INTO build_requests (instance_uuid, project_id, instance, trace_parent) SELECT u, p, inst, tp FROM t
       ON CONFLICT (instance_uuid) DO NOTHING),
     g AS (INSERT INTO instance_group_member (group_id, instance_uuid) SELECT ig.id, t.u FROM t JOIN instance_groups ig ON ig.uuid = t.g
       ON CONFLICT DO NOTHING)
     INSERT INTO instance_mappings (instance_uuid, project_id, user_id) SELECT u, p, us FROM t ON CONFLICT (instance_uuid) DO NOTHING`,
    [JSON.stringify(rows)],
  );
}

/**
 * One create's records ({@link checkServerRecords}, then {@link writeServerRecords}): every
 * server must belong to `projectId`. Idempotent.
 */
export async function createServerRecords(db: Queryable, servers: readonly NewServerRecord[], o: ServerRecordsOptions): Promise<void> {
  const checked = checkServerRecords(servers, o);
  await writeServerRecords(db, [checked]);
}
