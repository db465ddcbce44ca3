// `pnpm stack down --purge`: everything the stack created and nothing else. What a system
// creates is its plan's names (from the prefix) plus a record kept in the state dir of every
// database, role and vhost it ever provisioned there (an earlier `up` with more cells made
// databases today's plan does not name). Placement's database is the system's like any other.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dropOwnedDatabase, dropRole, dropVhostWithUser } from './provision.mjs';

const RECORD = 'provisioned.json';

/** Files the launcher writes in a state dir: topology and option files, spans (and their rotated files), each service's pid and log. */
const STATE_FILE =
  /^(system\.json|provisioned\.json|cells\.json|scheduler-cells\.json|spans(\.\d{8}T\d{9}Z-\d+-\d{6})?\.jsonl|(placement(-[a-z-]+)?|cell-conductor-cell\d+|compute-cell\d+|scheduler-\d+|super-conductor|api)\.(pid|log))$/;

/** The system's own names: `databases` are owned by a role of the same name; `readOnlyRoles` own nothing. */
export function systemNames(plan) {
  return {
    databases: [...plan.roles, `${plan.options.prefix}_placement`],
    readOnlyRoles: [...plan.readOnlyRoles],
    vhosts: [...plan.vhosts],
  };
}

const union = (a = [], b = []) => [...new Set([...a, ...b])];

function readRecord(stateDir) {
  const f = join(stateDir, RECORD);
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : {};
}

/** Adds `names` to the state dir's record of what this system provisioned (before provisioning them, so a crash leaves them listed). */
export function recordProvisioned(stateDir, names) {
  const r = readRecord(stateDir);
  const merged = {
    databases: union(r.databases, names.databases),
    readOnlyRoles: union(r.readOnlyRoles, names.readOnlyRoles),
    vhosts: union(r.vhosts, names.vhosts),
  };
  writeFileSync(join(stateDir, RECORD), JSON.stringify(merged, null, 2));
}

/** What a purge drops: the plan's names and everything recorded in the state dir. Pure but for reading the record. */
export function purgeTargets(plan, stateDir) {
  const mine = systemNames(plan);
  const r = readRecord(stateDir);
  return {
    databases: union(mine.databases, r.databases),
    readOnlyRoles: union(mine.readOnlyRoles, r.readOnlyRoles),
    vhosts: union(mine.vhosts, r.vhosts),
  };
}

/**
 * Drops the system's databases with their owner roles (placement's included), then its
 * read-only roles (their grants went with the databases), its vhosts and broker users, and
 * deletes the files the launcher wrote in the state dir (credentials in cells.json among them).
 * Idempotent. Run after every process of the system has stopped.
 */
export async function purgeSystem(plan, stateDir, withAdmin) {
  const t = purgeTargets(plan, stateDir);
  for (const db of t.databases) await dropOwnedDatabase(withAdmin, db);
  for (const role of t.readOnlyRoles) await dropRole(withAdmin, role);
  for (const vhost of t.vhosts) dropVhostWithUser(vhost);
  const files = existsSync(stateDir) ? readdirSync(stateDir).filter((f) => STATE_FILE.test(f)) : [];
  for (const f of files) rmSync(join(stateDir, f), { force: true });
  return { ...t, files };
}
