// Credentials and isolation for the native launcher: PostgreSQL roles and databases (each
// role owns only its database; CONNECT is revoked from PUBLIC so another role cannot even
// connect) and RabbitMQ vhosts with one user each, permitted on that vhost only.
// Dev credentials only: every password is a fixed development string derived from its name.
import { execFileSync } from 'node:child_process';

/** The development password of a role or broker user (never a real secret). */
export const devPassword = (name) => `${name}-dev`;

/** A PostgreSQL URL for `role` on `database`, on the admin URL's server. */
export function pgUrl(adminUrl, role, database) {
  const u = new URL(adminUrl);
  u.username = role;
  u.password = devPassword(role);
  u.pathname = `/${database}`;
  return u.toString();
}

/** An AMQP URL for `user` on `vhost` (host and port from `amqpBase`). */
export function amqpUrl(amqpBase, user, vhost) {
  const u = new URL(amqpBase);
  u.username = user;
  u.password = devPassword(user);
  u.pathname = `/${encodeURIComponent(vhost)}`;
  return u.toString();
}

const ident = (s) => {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(s)) throw new Error(`bad identifier ${s}`);
  return `"${s}"`;
};

/** Creates (or re-keys) `role` and its database `role`; idempotent. */
export async function ensureOwnedDatabase(withAdmin, role) {
  await withAdmin(async (c) => {
    const exists = (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount > 0;
    await c.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${ident(role)} LOGIN PASSWORD '${devPassword(role)}'`);
    if ((await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [role])).rowCount === 0)
      await c.query(`CREATE DATABASE ${ident(role)} OWNER ${ident(role)}`);
    await c.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${ident(role)} FROM PUBLIC`);
  });
}

/** Drops a database and its role (used by `down --purge`); idempotent. */
export async function dropOwnedDatabase(withAdmin, role) {
  await withAdmin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${ident(role)} WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS ${ident(role)}`);
  });
}

const ctl = (...args) => execFileSync('rabbitmqctl', ['-q', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Creates vhost `name` and user `name` (password re-set) with every permission on that vhost only; idempotent. */
export function ensureVhostWithUser(name) {
  const vhosts = ctl('list_vhosts', 'name')
    .split('\n')
    .map((l) => l.trim());
  if (!vhosts.includes(name)) ctl('add_vhost', name);
  const users = ctl('list_users')
    .split('\n')
    .map((l) => l.split(/\s/)[0]);
  if (users.includes(name)) ctl('change_password', name, devPassword(name));
  else ctl('add_user', name, devPassword(name));
  ctl('set_permissions', '-p', name, name, '.*', '.*', '.*');
}

/**
 * The same vhost, user and permissions as {@link ensureVhostWithUser}, through RabbitMQ's
 * management HTTP API (`apiUrl`: http://ADMIN:PASSWORD@HOST:15672), for a deployment whose
 * init has no rabbitmqctl (docker compose). PUT re-sets the password like change_password.
 */
export async function ensureVhostWithUserHttp(apiUrl, name) {
  const u = new URL(apiUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  const put = async (path, body) => {
    const r = await fetch(`${u.protocol}//${u.host}/api${path}`, {
      method: 'PUT',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`RabbitMQ management PUT ${path}: ${r.status} ${await r.text()}`);
  };
  const n = encodeURIComponent(name);
  await put(`/vhosts/${n}`, {});
  await put(`/users/${n}`, { password: devPassword(name), tags: '' });
  await put(`/permissions/${n}/${n}`, { configure: '.*', write: '.*', read: '.*' });
}

/** Deletes vhost and user `name` (`down --purge`); idempotent. */
export function dropVhostWithUser(name) {
  try {
    ctl('delete_vhost', name);
  } catch {
    /* absent */
  }
  try {
    ctl('delete_user', name);
  } catch {
    /* absent */
  }
}

/**
 * Creates (or re-keys) a LOGIN role that may only read: for each `{ database, tables }` it gets
 * CONNECT on the database, USAGE on its public schema and SELECT on exactly those tables,
 * nothing else (no write, no other table, no TEMPORARY). Run after the migrations (the tables
 * must exist). `withAdminOn(database, fn)` runs `fn` with a superuser client on that database.
 * Idempotent: privileges a previous run granted on other tables are revoked.
 */
export async function ensureReadOnlyRole(withAdminOn, role, grants) {
  await withAdminOn('postgres', async (c) => {
    const exists = (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount > 0;
    await c.query(
      `${exists ? 'ALTER' : 'CREATE'} ROLE ${ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD '${devPassword(role)}'`,
    );
  });
  for (const { database, tables } of grants) {
    await withAdminOn(database, async (c) => {
      await c.query(`GRANT CONNECT ON DATABASE ${ident(database)} TO ${ident(role)}`);
      await c.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${ident(role)}`);
      await c.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${ident(role)}`);
      await c.query(`GRANT USAGE ON SCHEMA public TO ${ident(role)}`);
      await c.query(`GRANT SELECT ON ${tables.map(ident).join(', ')} TO ${ident(role)}`);
    });
  }
}

/**
 * Everything `plan` owns on the servers: each role with its database (placement's too), each
 * vhost with its user (`ensureVhost(name)`: rabbitmqctl natively, the management API under
 * compose), then the read-only roles (an administrator's job; the databases' owners grant them
 * what they read during the bootstrap, `--read-only-role`). `pg`: launcher/pg.mjs adminSessions.
 * What `pnpm stack up` and the compose init provision. Idempotent.
 */
export async function provisionPlan(plan, pg, ensureVhost) {
  for (const role of [...plan.roles, plan.placement.role]) await ensureOwnedDatabase(pg.withAdmin, role);
  for (const vhost of plan.vhosts) await ensureVhost(vhost);
  for (const role of plan.readOnlyRoles) await ensureReadOnlyRole(pg.withAdminOn, role, []);
}

/** Drops a role that owns nothing (a read-only role, after the databases it read were dropped); idempotent. */
export async function dropRole(withAdmin, role) {
  await withAdmin(async (c) => {
    await c.query(`DROP ROLE IF EXISTS ${ident(role)}`);
  });
}
