import type { PoolClient, QueryResultRow } from 'pg';

/** Anything that runs a query: the pool or a client inside a transaction. */
export interface Db {
  query: PoolClient['query'];
}

/** Run a query and return its rows. */
export async function rows<T extends QueryResultRow>(db: Db, text: string, values: unknown[] = []): Promise<T[]> {
  const r = await db.query<T>(text, values);
  return r.rows;
}

/** PostgreSQL unique_violation. */
export const isUniqueViolation = (e: unknown): boolean => (e as { code?: string }).code === '23505';
/** PostgreSQL foreign_key_violation. */
export const isForeignKeyViolation = (e: unknown): boolean => (e as { code?: string }).code === '23503';
