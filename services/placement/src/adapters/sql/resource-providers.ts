import { badRequest, concurrentUpdate, conflict, ErrorCode, escapedNotFound, notFound, PlacementError } from '../../domain/errors';
import { canonicalUuid, isUuidLike } from '../../domain/query-params';
import { isUniqueViolation, rows, type Db } from './db';

/** Canonical uuid, or undefined when the text cannot be a uuid (then nothing matches). */
export const uuidParam = (v: string): string | undefined => (isUuidLike(v) ? canonicalUuid(v) : undefined);

/** A resource provider row as the API shows it. */
export interface ResourceProvider {
  readonly id: number;
  readonly uuid: string;
  readonly name: string;
  readonly generation: number;
  readonly rootId: number;
  readonly rootUuid: string;
  readonly parentUuid: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

interface RpRow {
  id: number;
  uuid: string;
  name: string;
  generation: number;
  root_id: number;
  root_uuid: string;
  parent_uuid: string | null;
  created_at: Date;
  updated_at: Date | null;
}

export const RP_SELECT = `SELECT rp.id, rp.uuid::text AS uuid, rp.name, rp.generation, rp.root_provider_id AS root_id,
  root.uuid::text AS root_uuid, parent.uuid::text AS parent_uuid, rp.created_at, rp.updated_at
  FROM resource_providers rp
  JOIN resource_providers root ON root.id = rp.root_provider_id
  LEFT JOIN resource_providers parent ON parent.id = rp.parent_provider_id`;

export const toProvider = (r: RpRow): ResourceProvider => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  generation: r.generation,
  rootId: r.root_id,
  rootUuid: r.root_uuid,
  parentUuid: r.parent_uuid,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Run a provider SELECT with extra WHERE/ORDER text. */
export async function selectProviders(db: Db, where: string, values: unknown[]): Promise<ResourceProvider[]> {
  return (await rows<RpRow>(db, `${RP_SELECT} ${where}`, values)).map(toProvider);
}

/** The provider with this uuid, or undefined. */
export async function findProvider(db: Db, uuid: string): Promise<ResourceProvider | undefined> {
  const u = uuidParam(uuid);
  if (u === undefined) return undefined;
  return (await selectProviders(db, 'WHERE rp.uuid = $1', [u]))[0];
}

/** The provider with this uuid, or 404 `placement.resource_provider.not_found`-style NotFound. */
export async function getProvider(db: Db, uuid: string, detail?: string): Promise<ResourceProvider> {
  const rp = await findProvider(db, uuid);
  if (rp === undefined) throw detail === undefined ? escapedNotFound(`No resource provider with uuid ${uuid} found`) : notFound(detail);
  return rp;
}

/** Lock a provider row for the rest of the transaction (FOR UPDATE); 404 when missing. */
export async function lockProvider(db: Db, uuid: string, detail?: string): Promise<ResourceProvider> {
  const u = uuidParam(uuid);
  const found = u === undefined ? [] : await rows<{ id: number }>(db, 'SELECT id FROM resource_providers WHERE uuid = $1 FOR UPDATE', [u]);
  if (found.length === 0) throw detail === undefined ? escapedNotFound(`No resource provider with uuid ${uuid} found`) : notFound(detail);
  return getProvider(db, uuid, detail);
}

/**
 * Bump a provider's generation if it still is `expected`; otherwise 409
 * `placement.concurrent_update`. Returns the new generation.
 */
export async function bumpGeneration(db: Db, rp: { id: number; uuid: string }, expected: number): Promise<number> {
  const r = await rows<{ generation: number }>(
    db,
    'UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = $1 AND generation = $2 RETURNING generation',
    [rp.id, expected],
  );
  const g = r[0];
  if (g === undefined) {
    throw concurrentUpdate(
      `resource provider generation conflict: Another thread concurrently updated the resource provider data. Please retry your update`,
    );
  }
  return g.generation;
}

const objectActionError = (action: string, reason: string): string => `Object action ${action} failed because: ${reason}`;

/** Create a provider (root, or child of `parentUuid`). 409 duplicate_name on uuid/name clash. */
export async function createProvider(db: Db, uuid: string, name: string, parentUuid: string | null): Promise<ResourceProvider> {
  let parent: ResourceProvider | undefined;
  // NOTE: the schema allows "", Placement's ResourceProvider.create() refuses a falsy name.
  if (name === '') throw badRequest(`Unable to create resource provider "", ${uuid}: ${objectActionError('create', 'name is required')}`);
  if (parentUuid !== null) {
    if (parentUuid === uuid)
      throw badRequest(
        `Unable to create resource provider "${name}", ${uuid}: ${objectActionError('create', 'parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.')}`,
      );
    parent = await findProvider(db, parentUuid);
    if (parent === undefined)
      throw badRequest(
        `Unable to create resource provider "${name}", ${uuid}: ${objectActionError('create', 'parent provider UUID does not exist.')}`,
      );
  }
  const dup = await rows<{ uuid: string; name: string }>(
    db,
    'SELECT uuid::text AS uuid, name FROM resource_providers WHERE uuid = $1 OR name = $2',
    [uuid, name],
  );
  if (dup.length > 0) throw duplicateProvider(dup, uuid, name);
  try {
    await db.query(
      `INSERT INTO resource_providers (uuid, name, parent_provider_id, root_provider_id)
      VALUES ($1, $2, $3, $4)`,
      [uuid, name, parent?.id ?? null, parent?.rootId ?? null],
    );
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateProvider([{ uuid, name }], uuid, name);
    throw e;
  }
  // NOTE: as Placement's second statement for a root, this sets updated_at (a child has none yet).
  await db.query('UPDATE resource_providers SET root_provider_id = id, updated_at = now() WHERE uuid = $1 AND root_provider_id IS NULL', [
    uuid,
  ]);
  return getProvider(db, uuid);
}

/**
 * The 409 of a duplicate: like Placement on PostgreSQL, which names the one column of the
 * first unique index violated, the name's (created first) when both are taken.
 */
function duplicateProvider(dup: Array<{ uuid: string; name: string }>, uuid: string, name: string): PlacementError {
  const column = dup.some((d) => d.name === name) ? `name: ${name}` : `uuid: ${uuid}`;
  return conflict(`Conflicting resource provider ${column} already exists.`, ErrorCode.DUPLICATE_NAME);
}

/** Uuids of `rp` and all its descendants. */
export async function subtreeIds(db: Db, rpId: number): Promise<Array<{ id: number; uuid: string }>> {
  return rows(
    db,
    `WITH RECURSIVE t(id, uuid) AS (
      SELECT id, uuid::text FROM resource_providers WHERE id = $1
      UNION ALL SELECT c.id, c.uuid::text FROM resource_providers c JOIN t ON c.parent_provider_id = t.id)
    SELECT id, uuid FROM t`,
    [rpId],
  );
}

/**
 * Rename and/or re-parent a provider. Re-parenting and un-parenting need 1.37
 * (`allowReparenting`); loops are refused. The whole subtree follows the new root.
 */
export async function updateProvider(
  db: Db,
  rp: ResourceProvider,
  update: { name?: string; parentUuid?: string | null },
  allowReparenting: boolean,
): Promise<ResourceProvider> {
  const saveError = (reason: string, action = 'update') =>
    badRequest(`Unable to save resource provider ${rp.uuid}: ${objectActionError(action, reason)}`);
  let parentId: number | null | undefined;
  let rootId: number | undefined;
  if (update.parentUuid !== undefined) {
    const currentParent = rp.parentUuid;
    if (update.parentUuid !== null) {
      const parent = await findProvider(db, update.parentUuid);
      if (parent === undefined) throw saveError('parent provider UUID does not exist.', 'create');
      if (currentParent !== null && currentParent !== parent.uuid && !allowReparenting)
        throw saveError('re-parenting a provider is not currently allowed.');
      const subtree = await subtreeIds(db, rp.id);
      if (subtree.some((s) => s.uuid === parent.uuid)) throw saveError('creating loop in the provider tree is not allowed.');
      parentId = parent.id;
      rootId = parent.rootId;
    } else if (currentParent !== null) {
      if (!allowReparenting) throw saveError('un-parenting a provider is not currently allowed.');
      parentId = null;
      rootId = rp.id;
    }
  }
  if (update.name !== undefined && update.name !== rp.name) {
    const dup = await rows(db, 'SELECT 1 FROM resource_providers WHERE name = $1 AND id <> $2', [update.name, rp.id]);
    if (dup.length > 0) throw conflict(`Conflicting resource provider ${update.name} already exists.`, ErrorCode.DUPLICATE_NAME);
  }
  // NOTE: updated_at moves only when something changes (SQLAlchemy writes no unchanged row).
  await db.query(
    `UPDATE resource_providers SET name = COALESCE($2, name),
      parent_provider_id = CASE WHEN $3::boolean THEN $4::integer ELSE parent_provider_id END,
      updated_at = CASE WHEN name IS DISTINCT FROM COALESCE($2, name)
        OR ($3::boolean AND parent_provider_id IS DISTINCT FROM $4::integer) THEN now() ELSE updated_at END
    WHERE id = $1`,
    [rp.id, update.name ?? null, parentId !== undefined, parentId ?? null],
  );
  if (rootId !== undefined && rootId !== rp.rootId) {
    const ids = (await subtreeIds(db, rp.id)).map((s) => s.id);
    await db.query('UPDATE resource_providers SET root_provider_id = $2 WHERE id = ANY($1::int[])', [ids, rootId]);
  }
  return getProvider(db, rp.uuid);
}

/** Delete a provider with its inventories, traits and aggregate links. 409 if parent or in use. */
export async function deleteProvider(db: Db, uuid: string): Promise<void> {
  const u = uuidParam(uuid);
  const found = u === undefined ? [] : await rows<{ id: number }>(db, 'SELECT id FROM resource_providers WHERE uuid = $1 FOR UPDATE', [u]);
  const id = found[0]?.id;
  if (id === undefined) throw notFound(`No resource provider with uuid ${uuid} found for delete`);
  const children = await rows(db, 'SELECT 1 FROM resource_providers WHERE parent_provider_id = $1 LIMIT 1', [id]);
  if (children.length > 0) {
    throw conflict(
      `Unable to delete parent resource provider ${uuid}: It has child resource providers.`,
      ErrorCode.PROVIDER_CANNOT_DELETE_PARENT,
    );
  }
  const allocs = await rows(db, 'SELECT 1 FROM allocations WHERE resource_provider_id = $1 LIMIT 1', [id]);
  if (allocs.length > 0) {
    throw conflict(`Unable to delete resource provider ${uuid}: Resource provider has allocations.`, ErrorCode.PROVIDER_IN_USE);
  }
  await db.query('DELETE FROM inventories WHERE resource_provider_id = $1', [id]);
  await db.query('DELETE FROM resource_provider_aggregates WHERE resource_provider_id = $1', [id]);
  await db.query('DELETE FROM resource_provider_traits WHERE resource_provider_id = $1', [id]);
  await db.query('UPDATE resource_providers SET root_provider_id = NULL WHERE id = $1', [id]);
  await db.query('DELETE FROM resource_providers WHERE id = $1', [id]);
}
