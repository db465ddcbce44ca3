import { concurrentUpdate } from '../../domain/errors';
import { rows, type Db } from './db';

/** Placement's `incomplete_consumer_project_id` / `_user_id` for consumers written before 1.8. */
export const INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000';

/** A consumer row, locked by `lockConsumer`. */
export interface ConsumerRow {
  id: number;
  uuid: string;
  generation: number;
  project_id: number;
  user_id: number;
  consumer_type_id: number | null;
}

// NOTE: SELECT first: on the claim path the project, user and type almost always exist,
// and a read is cheaper than an INSERT … ON CONFLICT (which also burns a sequence value).
async function ensureExternal(db: Db, table: 'projects' | 'users' | 'consumer_types', column: string, value: string): Promise<number> {
  const sel = await rows<{ id: number }>(db, `SELECT id FROM ${table} WHERE ${column} = $1`, [value]);
  if (sel[0]) return sel[0].id;
  const ins = await rows<{ id: number }>(
    db,
    `INSERT INTO ${table} (${column}) VALUES ($1) ON CONFLICT (${column}) DO NOTHING RETURNING id`,
    [value],
  );
  if (ins[0]) return ins[0].id;
  const again = await rows<{ id: number }>(db, `SELECT id FROM ${table} WHERE ${column} = $1`, [value]);
  if (!again[0]) throw new Error(`${table} ${value} vanished`);
  return again[0].id;
}

/** Project id for an external id, created if missing. Idempotent. */
export const ensureProject = (db: Db, externalId: string) => ensureExternal(db, 'projects', 'external_id', externalId);
/** User id for an external id, created if missing. Idempotent. */
export const ensureUser = (db: Db, externalId: string) => ensureExternal(db, 'users', 'external_id', externalId);
/** Consumer type id for a name, created if missing. Idempotent. */
export const ensureConsumerType = (db: Db, name: string) => ensureExternal(db, 'consumer_types', 'name', name);

/**
 * Ids of the project, user and (when given) consumer type, creating the missing ones; one
 * query when all exist, which is the claim path's common case.
 */
export async function ensureConsumerRefs(
  db: Db,
  project: string,
  user: string,
  type: string | undefined,
): Promise<{ projectId: number; userId: number; typeId: number | undefined }> {
  const r = (
    await rows<{ p: number | null; u: number | null; t: number | null }>(
      db,
      `SELECT
      (SELECT id FROM projects WHERE external_id = $1) AS p, (SELECT id FROM users WHERE external_id = $2) AS u,
      (SELECT id FROM consumer_types WHERE name = $3) AS t`,
      [project, user, type ?? null],
    )
  )[0];
  return {
    projectId: r?.p ?? (await ensureProject(db, project)),
    userId: r?.u ?? (await ensureUser(db, user)),
    typeId: type === undefined ? undefined : (r?.t ?? (await ensureConsumerType(db, type))),
  };
}

/** Lock an existing consumer row (FOR UPDATE), or undefined when it does not exist. */
export async function lockConsumer(db: Db, uuid: string): Promise<ConsumerRow | undefined> {
  return (
    await rows<ConsumerRow>(
      db,
      'SELECT id, uuid::text AS uuid, generation, project_id, user_id, consumer_type_id FROM consumers WHERE uuid = $1 FOR UPDATE',
      [uuid],
    )
  )[0];
}

/**
 * Insert a new consumer. A concurrent creator of the same uuid wins; this one answers
 * 409 `placement.concurrent_update` (the client re-reads and retries).
 */
export async function insertConsumer(db: Db, uuid: string, projectId: number, userId: number, typeId: number | null): Promise<ConsumerRow> {
  const r = await rows<ConsumerRow>(
    db,
    `INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id) VALUES ($1, $2, $3, $4)
    ON CONFLICT (uuid) DO NOTHING RETURNING id, uuid::text AS uuid, generation, project_id, user_id, consumer_type_id`,
    [uuid, projectId, userId, typeId],
  );
  if (!r[0]) throw concurrentUpdate(`consumer generation conflict - expected null but consumer ${uuid} was created concurrently`);
  return r[0];
}

/** Delete consumers among `uuids` that hold no allocation any more. */
export async function deleteConsumersWithoutAllocations(db: Db, uuids: readonly string[]): Promise<void> {
  if (uuids.length === 0) return;
  await db.query(
    `DELETE FROM consumers c WHERE c.uuid = ANY($1::uuid[])
    AND NOT EXISTS (SELECT 1 FROM allocations a WHERE a.consumer_id = c.uuid)`,
    [uuids],
  );
}
