import { CellDbError, checkUuid, checkUuids, type Queryable } from './db';

/** Nova's InstanceFault: why an instance went to ERROR (shown as the server's `fault`). */
export interface InstanceFault {
  readonly instanceUuid: string;
  readonly code: number;
  readonly message: string;
  readonly details: string | null;
  readonly host: string | null;
  readonly createdAt: Date;
}

interface Row {
  instance_uuid: string;
  code: number;
  message: string;
  details: string | null;
  host: string | null;
  created_at: Date;
}
const toFault = (r: Row): InstanceFault => ({
  instanceUuid: r.instance_uuid,
  code: r.code,
  message: r.message,
  details: r.details,
  host: r.host,
  createdAt: r.created_at,
});
const COLUMNS = 'instance_uuid, code, message, details, host, created_at';

export interface NewInstanceFault {
  instanceUuid: string;
  /** HTTP-like code, as Nova's (500 for build failures and NoValidHost alike). */
  code: number;
  message: string;
  details?: string | null;
  host?: string | null;
}

/**
 * Records a fault. **Not idempotent on its own**: write it in the same transaction as the
 * guarded state change it explains (`updateInstance` with an expected state), so that a
 * redelivered message fails the guard and adds no second fault (or only when `createInstance`
 * reported `created`, e.g. burying an instance in cell0). Throws
 * `cell_db.instance_fault.invalid` for bad input; a missing instance is a foreign-key error.
 */
export async function addInstanceFault(db: Queryable, f: NewInstanceFault): Promise<InstanceFault> {
  if (!Number.isSafeInteger(f.code) || f.code < 0)
    throw new CellDbError('cell_db.instance_fault.invalid', 'fault code must be a non-negative integer');
  if (f.message === '') throw new CellDbError('cell_db.instance_fault.invalid', 'fault message must not be empty');
  // NOTE: Nova truncates the message to 255 characters; the full text goes to details.
  const r = await db.query<Row>(
    `INSERT INTO instance_faults (instance_uuid, code, message, details, host) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [checkUuid(f.instanceUuid, 'instance uuid'), f.code, f.message.slice(0, 255), f.details ?? null, f.host ?? null],
  );
  const row = r.rows[0];
  if (row === undefined) throw new CellDbError('cell_db.instance_fault.race', 'fault insert returned nothing');
  return toFault(row);
}

/** Faults of an instance, newest first. Read-only. */
export async function listInstanceFaults(db: Queryable, instanceUuid: string): Promise<InstanceFault[]> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM instance_faults WHERE instance_uuid = $1 ORDER BY created_at DESC, id DESC`, [
    checkUuid(instanceUuid, 'instance uuid'),
  ]);
  return r.rows.map(toFault);
}

/** The newest fault of each of these instances (Nova's get_latest_for_instances); absent when none. Read-only. */
export async function getLatestInstanceFaults(db: Queryable, instanceUuids: readonly string[]): Promise<Map<string, InstanceFault>> {
  const r = await db.query<Row>(
    `SELECT DISTINCT ON (instance_uuid) ${COLUMNS} FROM instance_faults WHERE instance_uuid = ANY($1::uuid[])
     ORDER BY instance_uuid, created_at DESC, id DESC`,
    [checkUuids(instanceUuids, 'instance uuid')],
  );
  return new Map(r.rows.map((row) => [row.instance_uuid, toFault(row)]));
}
