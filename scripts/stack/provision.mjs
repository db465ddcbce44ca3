// PostgreSQL and RabbitMQ for the native launcher: where they are, and what it creates there.
// The names, the passwords ('<name>-dev') and the provisioning are deploy/launcher's
// (provision.mjs, pg.mjs), the very ones the compose init uses.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminSessions } from '../../deploy/launcher/pg.mjs';
import { ensureOwnedDatabase, ensureVhostWithUser, provisionPlan } from '../../deploy/launcher/provision.mjs';
import { recordProvisioned, systemNames } from '../../deploy/launcher/purge.mjs';
import { topology } from '../../deploy/launcher/system.mjs';

/** A superuser of the local PostgreSQL (scripts/ensure-services.sh creates it). */
export const ADMIN_URL = process.env.CELLSCHED_PG_ADMIN_URL ?? 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres';
/** The local RabbitMQ; each vhost's user and password go in (vhosts are made with rabbitmqctl). */
export const AMQP_BASE = process.env.CELLSCHED_AMQP_BASE_URL ?? 'amqp://127.0.0.1:5672/';
export const pg = adminSessions(ADMIN_URL);

/** A row's own role and database (`up --only placement` without a system); idempotent. */
export const ensureDatabase = (role) => ensureOwnedDatabase(pg.withAdmin, role);

/**
 * Roles, databases, vhosts and read-only roles of the system (provisionPlan), recorded first in
 * the state dir for `down --purge`; writes `<state>/cells.json`. Idempotent.
 */
export async function provisionSystem(plan, stateDir) {
  recordProvisioned(stateDir, systemNames(plan)); // what `down --purge` must drop, whatever the options of a later `up`
  await provisionPlan(plan, pg, ensureVhostWithUser);
  writeFileSync(join(stateDir, 'cells.json'), JSON.stringify(topology(plan), null, 2), { mode: 0o600 });
}
