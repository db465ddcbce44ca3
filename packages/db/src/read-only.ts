import { DbInputError, type Queryable } from './schema-layer';

const ROLE = /^[a-z_][a-z0-9_]{0,62}$/;
const TABLE = /^[a-z_][a-z0-9_]{0,62}$/;
const ident = (name: string): string => `"${name}"`;

/**
 * Lets `role` read exactly `tables` of the database `db` is connected to, and nothing else:
 * CONNECT on the database, USAGE on schema public, SELECT on those tables (views too); every
 * other privilege this session's role had granted it on the schema's tables and sequences is
 * revoked first, so a table dropped from the list stops being readable. Run by the database's
 * owner (it grants on its own objects), after the migrations (the tables must exist).
 * Idempotent. Throws `db.role.invalid` (nothing changed) for a role or table name that is not a
 * plain lowercase identifier, and PostgreSQL's error (42704) when the role does not exist.
 */
export async function grantReadOnly(db: Queryable, role: string, tables: readonly string[]): Promise<void> {
  if (!ROLE.test(role))
    throw new DbInputError('db.role.invalid', `read-only role must be a lowercase identifier, got ${JSON.stringify(role)}`);
  const bad = tables.filter((t) => !TABLE.test(t));
  if (bad.length > 0 || tables.length === 0)
    throw new DbInputError('db.role.invalid', `tables must be lowercase identifiers, got ${JSON.stringify(tables)}`);
  const database = (await db.query<{ d: string }>('SELECT current_database() AS d')).rows[0]?.d ?? '';
  await db.query(`GRANT CONNECT ON DATABASE "${database.replace(/"/g, '""')}" TO ${ident(role)}`);
  await db.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${ident(role)}`);
  await db.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${ident(role)}`);
  await db.query(`GRANT USAGE ON SCHEMA public TO ${ident(role)}`);
  await db.query(`GRANT SELECT ON ${tables.map(ident).join(', ')} TO ${ident(role)}`);
}

/**
 * A PostgreSQL URL opened read-only: every transaction of its sessions is READ ONLY
 * (`default_transaction_read_only`; a write fails with 25006) and, with `credentials`, the
 * session is that role instead of the URL's (a read-only role: even a session that switched
 * the setting off cannot write, 42501). The grant is the guarantee, the setting a second net.
 */
export function readOnlyUrl(url: string, credentials?: { readonly user: string; readonly password: string }): string {
  const u = new URL(url);
  if (credentials !== undefined) {
    u.username = encodeURIComponent(credentials.user);
    u.password = encodeURIComponent(credentials.password);
  }
  u.searchParams.set('options', '-c default_transaction_read_only=on');
  return u.toString();
}
