import { checkUuid, type Queryable } from './db';

/** Nova's HostMapping: which cell a compute host lives in. */
export interface HostMapping {
  readonly host: string;
  readonly cellId: number;
  readonly cellUuid: string;
  readonly cellName: string | null;
}

interface Row {
  host: string;
  cell_id: number;
  cell_uuid: string;
  cell_name: string | null;
}
const toHostMapping = (r: Row): HostMapping => ({ host: r.host, cellId: r.cell_id, cellUuid: r.cell_uuid, cellName: r.cell_name });
const SELECT = `SELECT h.host, h.cell_id, c.uuid AS cell_uuid, c.name AS cell_name
  FROM host_mappings h JOIN cell_mappings c ON c.id = h.cell_id`;

/**
 * Maps hosts to a cell. Idempotent: a host already mapped (to any cell) is left as it is.
 * Returns the hosts that were newly mapped, in input order (duplicates in the input count once).
 */
export async function addHostMappings(db: Queryable, cellId: number, hosts: readonly string[]): Promise<string[]> {
  if (hosts.length === 0) return [];
  const r = await db.query<{ host: string }>(
    `INSERT INTO host_mappings (cell_id, host) SELECT $1, h FROM unnest($2::text[]) AS h
     ON CONFLICT (host) DO NOTHING RETURNING host`,
    [cellId, [...new Set(hosts)]],
  );
  const added = new Set(r.rows.map((row) => row.host));
  return [...new Set(hosts)].filter((h) => added.has(h));
}

/** The mapping of one host, or undefined (Nova's HostMappingNotFound). Read-only. */
export async function getHostMapping(db: Queryable, host: string): Promise<HostMapping | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE h.host = $1`, [host]);
  return r.rows[0] === undefined ? undefined : toHostMapping(r.rows[0]);
}

/** Host mappings, optionally of one cell, ordered by cell name then host. Read-only. */
export async function listHostMappings(db: Queryable, opts: { cellUuid?: string } = {}): Promise<HostMapping[]> {
  const r =
    opts.cellUuid === undefined
      ? await db.query<Row>(`${SELECT} ORDER BY c.name NULLS LAST, c.uuid, h.host`)
      : await db.query<Row>(`${SELECT} WHERE c.uuid = $1 ORDER BY h.host`, [checkUuid(opts.cellUuid, 'cell uuid')]);
  return r.rows.map(toHostMapping);
}

/**
 * Removes a host's mapping (only if it maps to the cell `cellUuid`, when given: a same-named host
 * of another cell keeps its own). Idempotent: returns whether a mapping was removed.
 */
export async function deleteHostMapping(db: Queryable, host: string, opts: { cellUuid?: string } = {}): Promise<boolean> {
  const r =
    opts.cellUuid === undefined
      ? await db.query('DELETE FROM host_mappings WHERE host = $1', [host])
      : await db.query('DELETE FROM host_mappings h USING cell_mappings c WHERE h.host = $1 AND c.id = h.cell_id AND c.uuid = $2', [
          host,
          checkUuid(opts.cellUuid, 'cell uuid'),
        ]);
  return (r.rowCount ?? 0) > 0;
}

/** How many host mappings there are and the highest id: unchanged means no mapping was added or removed since. */
export interface HostMappingsVersion {
  readonly count: number;
  readonly maxId: number;
}

/** The table's {@link HostMappingsVersion}: one aggregate (a scan of the small table, ~1 ms at 10,000 rows), for readers that keep a copy (the scheduler). Read-only. */
export async function hostMappingsVersion(db: Queryable): Promise<HostMappingsVersion> {
  const r = await db.query<{ n: number; max: number }>('SELECT count(*)::int AS n, coalesce(max(id), 0)::int AS max FROM host_mappings');
  return { count: r.rows[0]?.n ?? 0, maxId: r.rows[0]?.max ?? 0 };
}

/** One mapping as a reader's copy keeps it: host, the cell's uuid, and the row id (ids only grow). */
export interface HostMappingRow {
  readonly id: number;
  readonly host: string;
  readonly cellUuid: string;
}

/**
 * Mappings with an id above `afterId` (0: all), by id. A reader that holds every mapping up to
 * `afterId` catches up with the inserts since; removals it sees as a count below its own (then it
 * reads all again). Reads `host_mappings` and the view `cell_mapping_endpoints` (never
 * `cell_mappings`, whose URLs hold the cell owners' credentials). Read-only.
 */
export async function listHostMappingsAfter(db: Queryable, afterId: number): Promise<HostMappingRow[]> {
  const r = await db.query<{ id: number; host: string; cell_uuid: string }>(
    'SELECT h.id, h.host, c.uuid::text AS cell_uuid FROM host_mappings h JOIN cell_mapping_endpoints c ON c.id = h.cell_id WHERE h.id > $1 ORDER BY h.id',
    [afterId],
  );
  return r.rows.map((row) => ({ id: row.id, host: row.host, cellUuid: row.cell_uuid }));
}
