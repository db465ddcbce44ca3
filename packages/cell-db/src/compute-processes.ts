import { CellDbError, checkUuids, type Queryable } from './db';

/** Whether a report belongs to the latest run of its compute process, or to an earlier one. */
export type ComputeProcessRun = 'current' | 'stale';

function checkName(name: string): void {
  if (name === '') throw new CellDbError('cell_db.compute_process.invalid', 'compute process name must not be empty');
}

/**
 * Records that the run of compute process `name` that started at `incarnation` (epoch ms)
 * reported. `current` when no later run has reported (this one is now the latest), `stale` when
 * one has: a report of an earlier run, delivered late, must change nothing. The process row stays
 * locked until the transaction ends, so a process's reports are decided one after another: call it
 * inside `withTransaction`, first. Idempotent.
 */
export async function recordComputeProcessRun(db: Queryable, name: string, incarnation: number): Promise<ComputeProcessRun> {
  checkName(name);
  if (!Number.isSafeInteger(incarnation) || incarnation < 0)
    throw new CellDbError('cell_db.compute_process.invalid', 'incarnation must be a non-negative integer');
  const r = await db.query<{ incarnation: string }>(
    `INSERT INTO compute_processes AS p (name, incarnation) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET incarnation = greatest(p.incarnation, EXCLUDED.incarnation), updated_at = now()
     RETURNING incarnation`,
    [name, incarnation],
  );
  return Number(r.rows[0]?.incarnation) === incarnation ? 'current' : 'stale';
}

/** Live services reported by compute process `name` whose host is not in `hosts` (the hosts it no longer serves), by host. Read-only. */
export async function listServicesNotServedBy(
  db: Queryable,
  name: string,
  hosts: readonly string[],
): Promise<{ id: number; host: string }[]> {
  checkName(name);
  const r = await db.query<{ id: number; host: string }>(
    `SELECT id, host FROM services WHERE compute_process = $1 AND deleted_at IS NULL AND NOT (host = ANY($2::text[])) ORDER BY host`,
    [name, [...hosts]],
  );
  return r.rows;
}

/** Adds resource providers to delete from placement to the process's list (creating its row if needed). Idempotent. */
export async function addPendingProviders(db: Queryable, name: string, uuids: readonly string[]): Promise<void> {
  checkName(name);
  if (uuids.length === 0) return;
  await db.query(
    `INSERT INTO compute_processes AS p (name, incarnation, pending_providers) VALUES ($1, 0, $2::uuid[])
     ON CONFLICT (name) DO UPDATE SET pending_providers = ARRAY(SELECT DISTINCT unnest(p.pending_providers || EXCLUDED.pending_providers) ORDER BY 1),
       updated_at = now()`,
    [name, checkUuids(uuids, 'resource provider uuid')],
  );
}

/** Removes providers from the process's list (they are gone from placement). Idempotent. */
export async function removePendingProviders(db: Queryable, name: string, uuids: readonly string[]): Promise<void> {
  if (uuids.length === 0) return;
  await db.query(
    `UPDATE compute_processes SET pending_providers = ARRAY(SELECT unnest(pending_providers) EXCEPT SELECT unnest($2::uuid[]) ORDER BY 1), updated_at = now()
     WHERE name = $1`,
    [name, checkUuids(uuids, 'resource provider uuid')],
  );
}

/** Every process with providers still to delete (or only `name`'s): process name → provider uuids. Read-only. */
export async function listPendingProviders(db: Queryable, name?: string): Promise<Map<string, string[]>> {
  const r = await db.query<{ name: string; pending: string[] }>(
    `SELECT name, pending_providers::text[] AS pending FROM compute_processes
     WHERE cardinality(pending_providers) > 0 AND ($1::text IS NULL OR name = $1) ORDER BY name`,
    [name ?? null],
  );
  return new Map(r.rows.map((row) => [row.name, row.pending]));
}

/**
 * Adds providers to the list of the compute process that reported service `serviceId` (deleted
 * or not), so its cell conductor's sweep deletes them once placement lets it. False (nothing
 * done) when no process is recorded for the service. Idempotent.
 */
export async function addPendingProvidersOfService(db: Queryable, serviceId: number, uuids: readonly string[]): Promise<boolean> {
  const r = await db.query<{ name: string | null }>('SELECT compute_process AS name FROM services WHERE id = $1', [serviceId]);
  const name = r.rows[0]?.name ?? null;
  if (name === null) return false;
  await addPendingProviders(db, name, uuids);
  return true;
}

/**
 * Forgets these providers wherever they are queued (their compute nodes are live again: the host
 * came back, and its compute reports the provider itself). Idempotent.
 */
export async function forgetPendingProviders(db: Queryable, uuids: readonly string[]): Promise<void> {
  if (uuids.length === 0) return;
  await db.query(
    `UPDATE compute_processes SET pending_providers = ARRAY(SELECT unnest(pending_providers) EXCEPT SELECT unnest($1::uuid[]) ORDER BY 1), updated_at = now()
     WHERE pending_providers && $1::uuid[]`,
    [checkUuids(uuids, 'resource provider uuid')],
  );
}
