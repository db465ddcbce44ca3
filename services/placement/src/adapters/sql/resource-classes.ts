import { badRequest, conflict, escapedNotFound } from '../../domain/errors';
import { isUniqueViolation, rows, type Db } from './db';

/** A resource class row (standard ones have Placement's fixed ids < 10000). */
export interface ResourceClass {
  readonly id: number;
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}
interface RcRow {
  id: number;
  name: string;
  created_at: Date;
  updated_at: Date | null;
}
const toRc = (r: RcRow): ResourceClass => ({ id: r.id, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at });

export const isCustom = (name: string): boolean => name.startsWith('CUSTOM_');

/** All classes, standard first (by id). */
export async function listResourceClasses(db: Db): Promise<ResourceClass[]> {
  return (await rows<RcRow>(db, 'SELECT * FROM resource_classes ORDER BY id')).map(toRc);
}

/** The class or 404 `No such resource class NAME.` */
export async function getResourceClass(db: Db, name: string): Promise<ResourceClass> {
  const rc = (await rows<RcRow>(db, 'SELECT * FROM resource_classes WHERE name = $1', [name])).map(toRc)[0];
  if (!rc) throw escapedNotFound(`No such resource class ${name}.`);
  return rc;
}

/** Map of class name → id for `names`; 400 (or `onMissing`) naming the first unknown one. */
export async function resourceClassIds(db: Db, names: readonly string[]): Promise<Map<string, number>> {
  const found = await rows<{ id: number; name: string }>(db, 'SELECT id, name FROM resource_classes WHERE name = ANY($1::text[])', [
    [...names],
  ]);
  return new Map(found.map((r) => [r.name, r.id]));
}

/** Create a custom class; 409 when it exists. */
export async function createResourceClass(db: Db, name: string): Promise<ResourceClass> {
  try {
    const r = await rows<RcRow>(db, 'INSERT INTO resource_classes (name) VALUES ($1) RETURNING *', [name]);
    return toRc(r[0] as RcRow);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`Conflicting resource class already exists: ${name}`);
    throw e;
  }
}

/** Create if missing (PUT at 1.7+): `created` tells 201 from 204. Idempotent. */
export async function ensureResourceClass(db: Db, name: string): Promise<{ rc: ResourceClass; created: boolean }> {
  const r = await rows<RcRow>(db, 'INSERT INTO resource_classes (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING *', [name]);
  if (r[0]) return { rc: toRc(r[0]), created: true };
  return { rc: await getResourceClass(db, name), created: false };
}

/** Rename a custom class (1.2–1.6). */
export async function renameResourceClass(db: Db, name: string, newName: string): Promise<ResourceClass> {
  const rc = await getResourceClass(db, name);
  if (!isCustom(name)) throw badRequest(`Cannot update standard resource class ${name}`);
  try {
    const r = await rows<RcRow>(db, 'UPDATE resource_classes SET name = $2, updated_at = now() WHERE id = $1 RETURNING *', [
      rc.id,
      newName,
    ]);
    return toRc(r[0] as RcRow);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`Resource class already exists: ${newName}`);
    throw e;
  }
}

/** Delete a custom class: 400 if standard, 409 while any inventory uses it. */
export async function deleteResourceClass(db: Db, name: string): Promise<void> {
  const rc = await getResourceClass(db, name);
  if (!isCustom(name)) throw badRequest(`Error in delete resource class: Cannot delete standard resource class ${name}.`);
  const used = await rows(db, 'SELECT 1 FROM inventories WHERE resource_class_id = $1 LIMIT 1', [rc.id]);
  if (used.length > 0)
    throw conflict(`Error in delete resource class: Cannot delete resource class ${name}. Class is in use in inventory.`);
  await db.query('DELETE FROM resource_classes WHERE id = $1', [rc.id]);
}
