import { Instance } from '@cellsched/wire';
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

interface Row { instance_uuid: string; project_id: string; instance: unknown; created_at: Date; trace_parent: string | null }
const toBuildRequest = (r: Row): BuildRequest => ({
  instanceUuid: r.instance_uuid, projectId: r.project_id, instance: Instance.fromJSON(r.instance), createdAt: r.created_at,
  traceParent: r.trace_parent ?? undefined,
});
const COLUMNS = 'instance_uuid, project_id, instance, created_at, trace_parent';
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Stores a build request for `instance.uuid`, with the create's W3C `traceParent` when tracing
 * is on. Idempotent: returns false (and changes nothing) if one already exists for that instance.
 */
export async function createBuildRequest(db: Queryable, instance: Instance, traceParent?: string): Promise<boolean> {
  const uuid = checkUuid(instance.uuid, 'instance uuid');
  if (instance.projectId === '') throw new ApiDbError('api_db.build_request.invalid', 'instance.projectId must not be empty');
  if (traceParent !== undefined && !TRACEPARENT.test(traceParent)) {
    throw new ApiDbError('api_db.build_request.invalid', `traceParent ${JSON.stringify(traceParent)} is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)`);
  }
  const r = await db.query(
    'INSERT INTO build_requests (instance_uuid, project_id, instance, trace_parent) VALUES ($1, $2, $3, $4) ON CONFLICT (instance_uuid) DO NOTHING',
    [uuid, instance.projectId, JSON.stringify(Instance.toJSON(instance)), traceParent ?? null]);
  return (r.rowCount ?? 0) > 0;
}

/** The build request of an instance, or undefined (Nova's BuildRequestNotFound). Read-only. */
export async function getBuildRequest(db: Queryable, instanceUuid: string): Promise<BuildRequest | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM build_requests WHERE instance_uuid = $1`, [checkUuid(instanceUuid, 'instance uuid')]);
  return r.rows[0] === undefined ? undefined : toBuildRequest(r.rows[0]);
}

/**
 * Build requests of a project (or all), oldest first. Read-only. `displayNameRegex`: only
 * those whose would-be instance's name matches this PostgreSQL regular expression anywhere
 * (`~`); an invalid pattern fails with SQLSTATE 2201B.
 */
export async function listBuildRequests(db: Queryable, opts: { projectId?: string; displayNameRegex?: string } = {}): Promise<BuildRequest[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM build_requests WHERE ($1::text IS NULL OR project_id = $1)
       AND ($2::text IS NULL OR coalesce(instance->>'displayName', '') ~ $2) ORDER BY id`, [opts.projectId ?? null, opts.displayNameRegex ?? null]);
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

/** Which of `instanceUuids` still have a build request (not scheduled to a cell yet). Read-only. */
export async function instancesWithBuildRequest(db: Queryable, instanceUuids: readonly string[]): Promise<Set<string>> {
  const r = await db.query<{ instance_uuid: string }>('SELECT instance_uuid::text FROM build_requests WHERE instance_uuid = ANY($1::uuid[])',
    [checkUuids(instanceUuids, 'instance uuid')]);
  return new Set(r.rows.map((x) => x.instance_uuid));
}
