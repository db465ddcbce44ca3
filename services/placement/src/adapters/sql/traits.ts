import { badRequest, conflict, notFound } from '../../domain/errors';
import { isUniqueViolation, rows, type Db } from './db';
import { bumpGeneration, type ResourceProvider } from './resource-providers';

/** A trait row. */
export interface Trait {
  readonly id: number;
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}
interface TraitRow {
  id: number;
  name: string;
  created_at: Date;
  updated_at: Date | null;
}
const toTrait = (r: TraitRow): Trait => ({ id: r.id, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at });

/** The trait, or undefined. */
export async function findTrait(db: Db, name: string): Promise<Trait | undefined> {
  return (await rows<TraitRow>(db, 'SELECT * FROM traits WHERE name = $1', [name])).map(toTrait)[0];
}

/** Create a custom trait if missing; `created` tells which happened (201 vs 204). Idempotent. */
export async function ensureTrait(db: Db, name: string): Promise<{ trait: Trait; created: boolean }> {
  const inserted = await rows<TraitRow>(db, 'INSERT INTO traits (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING *', [name]);
  const row = inserted[0];
  if (row) return { trait: toTrait(row), created: true };
  const t = await findTrait(db, name);
  if (!t) throw new Error(`trait ${name} vanished`);
  return { trait: t, created: false };
}

/** Delete a custom trait: 400 for standard ones, 409 while a provider has it, 404 if missing. */
export async function deleteTrait(db: Db, name: string): Promise<void> {
  const t = await findTrait(db, name);
  if (!t) throw notFound(`No such trait(s): ${name}.`);
  if (!name.startsWith('CUSTOM_')) throw badRequest(`Cannot delete standard trait ${name}.`);
  const used = await rows(db, 'SELECT 1 FROM resource_provider_traits WHERE trait_id = $1 LIMIT 1', [t.id]);
  if (used.length > 0) throw conflict(`The trait ${name} is in use by a resource provider.`);
  await db.query('DELETE FROM traits WHERE id = $1', [t.id]);
}

/** Filters of GET /traits. */
export interface TraitListFilter {
  readonly nameIn?: readonly string[];
  readonly prefix?: string;
  readonly associated?: boolean;
}

/** Traits matching the filters, by name. */
export async function listTraits(db: Db, f: TraitListFilter): Promise<Trait[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (f.nameIn) {
    values.push(f.nameIn);
    where.push(`t.name = ANY($${values.length}::text[])`);
  }
  if (f.prefix !== undefined) {
    values.push(`${f.prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.push(`t.name LIKE $${values.length}`);
  }
  if (f.associated !== undefined) {
    where.push(`${f.associated ? '' : 'NOT '}EXISTS (SELECT 1 FROM resource_provider_traits rpt WHERE rpt.trait_id = t.id)`);
  }
  const sql = `SELECT t.* FROM traits t ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY t.name`;
  return (await rows<TraitRow>(db, sql, values)).map(toTrait);
}

/** Traits of one provider, by name. */
export async function providerTraits(db: Db, rpId: number): Promise<Trait[]> {
  return (
    await rows<TraitRow>(
      db,
      `SELECT t.* FROM traits t JOIN resource_provider_traits rpt ON rpt.trait_id = t.id
    WHERE rpt.resource_provider_id = $1 ORDER BY t.name`,
      [rpId],
    )
  ).map(toTrait);
}

/**
 * Replace a provider's traits (all names must exist: 400 otherwise) and bump its generation
 * if it is still `generation` (409 `placement.concurrent_update` otherwise); an unchanged set
 * is no write and keeps the generation.
 */
export async function setProviderTraits(
  db: Db,
  rp: ResourceProvider,
  names: readonly string[],
  generation: number,
): Promise<{ traits: Trait[]; generation: number }> {
  const traits = await listTraits(db, { nameIn: names });
  const missing = [...new Set(names)].filter((n) => !traits.some((t) => t.name === n));
  if (missing.length > 0) throw badRequest(`No such trait ${missing.join(', ')}`);
  // NOTE: as Placement's _set_traits: the same set again writes nothing and keeps the generation.
  const current = new Set((await providerTraits(db, rp.id)).map((t) => t.name));
  if (current.size === traits.length && traits.every((t) => current.has(t.name))) return { traits, generation };
  const newGen = await bumpGeneration(db, rp, generation);
  await db.query('DELETE FROM resource_provider_traits WHERE resource_provider_id = $1', [rp.id]);
  try {
    await db.query('INSERT INTO resource_provider_traits (resource_provider_id, trait_id) SELECT $1, unnest($2::int[])', [
      rp.id,
      traits.map((t) => t.id),
    ]);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict('Another thread concurrently updated the data. Please retry your update');
    throw e;
  }
  return { traits, generation: newGen };
}
