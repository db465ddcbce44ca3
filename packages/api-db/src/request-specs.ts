import { RequestSpec } from '@cellsched/wire';
import { ApiDbError, checkUuid, type Queryable } from './db';

/**
 * Stores the RequestSpec of `spec.instanceUuid` (as ts-proto JSON), replacing an existing
 * one (Nova's RequestSpec.save). Idempotent. Returns true if it was new.
 */
export async function saveRequestSpec(db: Queryable, spec: RequestSpec): Promise<boolean> {
  const uuid = checkUuid(spec.instanceUuid, 'request spec instance uuid');
  if (spec.flavor === undefined) throw new ApiDbError('api_db.request_spec.invalid', 'request spec must carry a flavor');
  const r = await db.query<{ created: boolean }>(
    `INSERT INTO request_specs (instance_uuid, spec) VALUES ($1, $2)
     ON CONFLICT (instance_uuid) DO UPDATE SET spec = EXCLUDED.spec, updated_at = now()
     RETURNING (xmax = 0) AS created`,
    [uuid, JSON.stringify(RequestSpec.toJSON(spec))],
  );
  return r.rows[0]?.created === true;
}

/** The RequestSpec of an instance, or undefined. Read-only. */
export async function getRequestSpec(db: Queryable, instanceUuid: string): Promise<RequestSpec | undefined> {
  const r = await db.query<{ spec: unknown }>('SELECT spec FROM request_specs WHERE instance_uuid = $1', [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows[0] === undefined ? undefined : RequestSpec.fromJSON(r.rows[0].spec);
}

/** Deletes the RequestSpec. Idempotent: returns whether it existed. */
export async function deleteRequestSpec(db: Queryable, instanceUuid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM request_specs WHERE instance_uuid = $1', [checkUuid(instanceUuid, 'instance uuid')]);
  return (r.rowCount ?? 0) > 0;
}
