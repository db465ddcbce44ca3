// PostgreSQL sessions of both launchers (`pnpm stack` and the compose init): one client per
// call, closed after it. pg comes from cellsched-manage's dependencies, which the runtime image
// holds too (deploy/images/bundle.sh).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const { Client } = createRequire(join(ROOT, 'services/manage/package.json'))('pg');

/** Runs `fn` with a client connected to `url`; the client is closed whatever `fn` does. */
export async function withClient(url, fn) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Superuser sessions on `adminUrl`'s server: `withAdmin(fn)` on its database, `withAdminOn(db, fn)` on database `db`. */
export function adminSessions(adminUrl) {
  const withAdminOn = (db, fn) => {
    const u = new URL(adminUrl);
    u.pathname = `/${db}`;
    return withClient(u.toString(), fn);
  };
  return { withAdmin: (fn) => withClient(adminUrl, fn), withAdminOn };
}

/** How many compute hosts the system's API DB maps (discover_hosts' progress). */
export const countHostMappings = (plan) =>
  withClient(plan.api.dbUrl, async (c) => Number((await c.query('SELECT count(*) AS n FROM host_mappings')).rows[0].n));
