import { COMPUTE_NODE_COLUMNS, toComputeNodeRecord, type ComputeNodeRecord, type ComputeNodeRow } from './compute-nodes';
import { CellDbError, type Queryable } from './db';
import { SERVICE_COLUMNS, toServiceRecord, type ServiceRecord } from './services';

type ServiceRow = Parameters<typeof toServiceRecord>[0];

/** A compute node with the service it belongs to (what the scheduler's host cache keeps). */
export interface HostRecord {
  readonly node: ComputeNodeRecord;
  /** Undefined if the node has no service row (never registered, or deleted). */
  readonly service: ServiceRecord | undefined;
}

/** One incremental read: the changed records and the cursor to pass next time. */
export interface HostChanges {
  /** Nodes that changed, or whose service changed (heartbeat, disable, delete). Deleted nodes are included when `since` is given. */
  readonly hosts: readonly HostRecord[];
  /** Pass as `since` next time. Lags the database clock by `overlapMs`, so rows may repeat: merge by node uuid. */
  readonly nextSince: Date;
}

type ServiceJson = Record<string, unknown>;

function serviceFromJson(j: ServiceJson | null): ServiceRecord | undefined {
  if (j === null) return undefined;
  const date = (k: string): Date | null => (j[k] === null ? null : new Date(j[k] as string));
  return toServiceRecord({
    id: j.id as number,
    uuid: j.uuid as string,
    host: j.host as string,
    binary: j.binary as string,
    topic: j.topic as string | null,
    report_count: j.report_count as number,
    disabled: j.disabled as boolean,
    disabled_reason: j.disabled_reason as string | null,
    last_seen_up: date('last_seen_up'),
    forced_down: j.forced_down as boolean,
    version: j.version as number,
    created_at: date('created_at') ?? new Date(0),
    updated_at: date('updated_at') ?? new Date(0),
    deleted_at: date('deleted_at'),
  });
}

/**
 * Compute nodes (with their services) changed after `since`; every live node when `since` is
 * undefined (the initial load). Read-only, safe to repeat.
 *
 * Why the overlap: writers stamp `updated_at = now()`, their transaction's *start* time, and
 * may commit later than a concurrent read. The cursor returned is the database time before
 * the read minus `overlapMs` (default 5 s), never earlier than `since`, so a write committed
 * up to `overlapMs` after its start is still seen next time. Callers should still do a full
 * reload now and then (a transaction open longer than the overlap could be missed).
 */
export async function listHostRecordsChangedSince(
  db: Queryable,
  since: Date | undefined,
  opts: { overlapMs?: number } = {},
): Promise<HostChanges> {
  const overlapMs = opts.overlapMs ?? 5000;
  if (!Number.isFinite(overlapMs) || overlapMs < 0) throw new CellDbError('cell_db.invalid', 'overlapMs must be a non-negative number');
  const cursor = await db.query<{ next: Date }>('SELECT greatest($1::timestamptz, now() - make_interval(secs => $2)) AS next', [
    since ?? null,
    overlapMs / 1000,
  ]);
  const nodes = COMPUTE_NODE_COLUMNS.split(',')
    .map((c) => `c.${c.trim()}`)
    .join(', ');
  const r = await db.query<ComputeNodeRow & { service: ServiceJson | null }>(
    `WITH changed AS (
       SELECT id FROM compute_nodes WHERE ($1::timestamptz IS NULL AND deleted_at IS NULL) OR updated_at > $1
       UNION SELECT c.id FROM compute_nodes c JOIN services s ON s.id = c.service_id WHERE $1::timestamptz IS NOT NULL AND s.updated_at > $1)
     SELECT ${nodes}, (SELECT to_jsonb(x) FROM (SELECT ${SERVICE_COLUMNS} FROM services s WHERE s.id = c.service_id AND s.deleted_at IS NULL) x) AS service
     FROM compute_nodes c WHERE c.id IN (SELECT id FROM changed) ORDER BY c.id`,
    [since ?? null],
  );
  const next = cursor.rows[0]?.next;
  if (next === undefined) throw new CellDbError('cell_db.race', 'cursor query returned nothing');
  return { hosts: r.rows.map((row) => ({ node: toComputeNodeRecord(row), service: serviceFromJson(row.service) })), nextSince: next };
}

type ServiceEpochRow = Omit<ServiceRow, 'last_seen_up' | 'created_at' | 'updated_at' | 'deleted_at'> & {
  last_seen_up: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
};

const epochMs = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8 AS ${column}`;

/** SERVICE_COLUMNS with the timestamps as epoch milliseconds. */
const SERVICE_EPOCH_COLUMNS = SERVICE_COLUMNS.split(',')
  .map((c) => c.trim())
  .map((c) => (['last_seen_up', 'created_at', 'updated_at', 'deleted_at'].includes(c) ? epochMs(c) : c))
  .join(', ');

function serviceFromEpochRow(r: ServiceEpochRow): ServiceRecord {
  const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));
  return toServiceRecord({
    ...r,
    last_seen_up: date(r.last_seen_up),
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
    deleted_at: date(r.deleted_at),
  });
}

/** One incremental read split by what changed: node rows (with their service) and service rows alone. */
export interface HostChangesSplit {
  /** Nodes whose compute_nodes row changed (deleted ones included), each with its live service as read with it. */
  readonly hosts: readonly HostRecord[];
  /**
   * Services whose row changed (disable, force down, delete, register; a heartbeat of a row the
   * reader does not hold), every binary, deleted ones included: merge by `id` into the nodes that name them.
   */
  readonly services: readonly ServiceRecord[];
  /**
   * Services the reader holds (`known`) whose row changed by heartbeats only: the same state
   * (disabled, reason, forced down, deleted), a newer `last_seen_up`. Take the liveness in, keep the rest.
   */
  readonly heartbeats: readonly ServiceHeartbeat[];
  /**
   * (service id, version) of every changed service row listed, held or read; once the reader has
   * taken `services` and `heartbeats` in, these are what it holds (pass them as `known` next time).
   */
  readonly serviceVersions: readonly (readonly [number, ServiceVersion])[];
  /**
   * (node id, row version) of every changed node row listed, held or read; once the reader has
   * taken `hosts` in, these are what it holds (pass them as `knownNodes` next time).
   */
  readonly nodeVersions: readonly (readonly [number, string])[];
  /** Pass as `since` next time (same rule as {@link listHostRecordsChangedSince}). */
  readonly nextSince: Date;
}

/** What a reader holds of a service row: its `updated_at` (epoch µs) and its state apart from liveness. */
export interface ServiceVersion {
  readonly us: number;
  /** disabled, forced_down, deleted and disabled_reason, as one key: a heartbeat leaves it as it is. */
  readonly state: string;
}

/** A held service's liveness, newer than the reader's (a heartbeat). */
export interface ServiceHeartbeat {
  readonly id: number;
  readonly lastSeenUp: Date | null;
  readonly updatedAt: Date;
}

/**
 * The incremental half of {@link listHostRecordsChangedSince}, split: nodes whose own row changed
 * after `since` (full records, with their service), and services changed after `since` as
 * service rows alone, without their nodes' columns. Why: a heartbeat round of every compute is the
 * bulk of what the scheduler's host cache reads, and it changes service rows only; read through
 * their nodes (every node column, the service as JSON), each heartbeat cost the reader about three
 * times the CPU of the service row alone (5,000 hosts: 100-180 ms vs 36-60 ms). Same cursor and
 * overlap rule; services are read after nodes, so a service row is never older than the one read
 * with its node. Read-only.
 */
export async function listHostChangesSplitSince(
  db: Queryable,
  since: Date,
  opts: {
    overlapMs?: number;
    pageSize?: number;
    /**
     * Service id -> version of the rows the reader already holds, as `serviceVersions` of earlier
     * reads gave them: those rows are left out of `services`, and a held row changed by heartbeats
     * only comes as a `heartbeats` entry. Why: the overlap reads every row changed in its window
     * again (with a 1 s refresh and a 2 s overlap, each heartbeat about three times), and a
     * heartbeat round of every compute is most of what changes; the changed rows are first listed
     * as (id, updated_at, last_seen_up, state) only, and only rows whose state the reader does not
     * hold are read whole (10,000 hosts: every row read whole each heartbeat round was 10% of the
     * cell databases' statement time under a build load).
     */
    known?: ReadonlyMap<number, ServiceVersion>;
    /**
     * Node id -> row version of the node rows the reader already holds, as `nodeVersions` of
     * earlier reads gave them: those rows are listed, not read again. Why: the overlap reads every
     * node changed in its window again, and under a build load that is every host a build started
     * or ended on (its stats): 10,000 hosts at 170 builds/s, two schedulers read about six whole
     * node rows (every column, the service as JSON) per build, about 10% of PostgreSQL's statement
     * time, where only one per change and replica is new to it.
     */
    knownNodes?: ReadonlyMap<number, string>;
  } = {},
): Promise<HostChangesSplit> {
  const overlapMs = opts.overlapMs ?? 5000;
  if (!Number.isFinite(overlapMs) || overlapMs < 0) throw new CellDbError('cell_db.invalid', 'overlapMs must be a non-negative number');
  const cursor = await db.query<{ next: Date }>('SELECT greatest($1::timestamptz, now() - make_interval(secs => $2)) AS next', [
    since,
    overlapMs / 1000,
  ]);
  const nodes = COMPUTE_NODE_COLUMNS.split(',')
    .map((c) => `c.${c.trim()}`)
    .join(', ');
  // NOTE: a row's version is the transaction that wrote it (xmin): every committed change of the row
  // has its own, whatever its updated_at (two writers may stamp the same one).
  const nodeList = await db.query<{ id: number; v: string }>(
    'SELECT id, xmin::text AS v FROM compute_nodes WHERE updated_at > $1 ORDER BY id',
    [since],
  );
  const knownNodes = opts.knownNodes ?? new Map<number, string>();
  const nodeVersions: [number, string][] = [];
  const wantedNodes: number[] = [];
  for (const row of nodeList.rows) {
    nodeVersions.push([row.id, row.v]);
    if (knownNodes.get(row.id) !== row.v) wantedNodes.push(row.id);
  }
  // NOTE: a row changed between the two reads comes newer here, and again next time (its updated_at is past the cursor).
  const r =
    wantedNodes.length === 0
      ? { rows: [] }
      : await db.query<ComputeNodeRow & { service: ServiceJson | null }>(
          `SELECT ${nodes}, (SELECT to_jsonb(x) FROM (SELECT ${SERVICE_COLUMNS} FROM services s WHERE s.id = c.service_id AND s.deleted_at IS NULL) x) AS service
           FROM compute_nodes c WHERE c.id = ANY($1::int[]) ORDER BY c.id`,
          [wantedNodes],
        );
  // NOTE: the timestamps as epoch milliseconds (float8), not text: a heartbeat round is thousands of
  // rows with four timestamps each, and parsing timestamp text was the biggest single part of
  // reading them (a Date keeps milliseconds only either way). In pages by id: a heartbeat round
  // read in one piece held the reader's event loop for tens of milliseconds per cell (every
  // decision of a scheduler replica waited); page by page, what arrived meanwhile goes between
  // them. A row changed during the read is seen in a later page or, with its newer updated_at,
  // by the next read (the cursor was taken first): none is lost.
  const pageSize = opts.pageSize ?? 1000;
  if (!(Number.isInteger(pageSize) && pageSize >= 1)) throw new CellDbError('cell_db.invalid', 'pageSize must be an integer >= 1');
  const services: ServiceRecord[] = [];
  const heartbeats: ServiceHeartbeat[] = [];
  const versions: [number, ServiceVersion][] = [];
  const known = opts.known ?? new Map<number, ServiceVersion>();
  for (let after = 0; ;) {
    // NOTE: microseconds (exact in a float8 for centuries): two writes within one millisecond still differ.
    const listed = await db.query<{ id: number; us: number; seen: number | null; state: string }>(
      `SELECT id, (extract(epoch FROM updated_at) * 1000000)::float8 AS us, (extract(epoch FROM last_seen_up) * 1000)::float8 AS seen,
         concat_ws('|', disabled, forced_down, deleted_at IS NOT NULL, disabled_reason) AS state
       FROM services WHERE updated_at > $1 AND id > $2 ORDER BY id LIMIT $3`,
      [since, after, pageSize],
    );
    const wanted: number[] = [];
    for (const row of listed.rows) {
      versions.push([row.id, { us: row.us, state: row.state }]);
      const held = known.get(row.id);
      if (held?.us === row.us) continue;
      if (held?.state === row.state)
        heartbeats.push({ id: row.id, lastSeenUp: row.seen === null ? null : new Date(row.seen), updatedAt: new Date(row.us / 1000) });
      else wanted.push(row.id);
    }
    // NOTE: a row changed between the two reads comes newer here, and again next time (its updated_at is past the cursor).
    if (wanted.length > 0) {
      const page = await db.query<ServiceEpochRow>(`SELECT ${SERVICE_EPOCH_COLUMNS} FROM services WHERE id = ANY($1::int[]) ORDER BY id`, [
        wanted,
      ]);
      for (const row of page.rows) services.push(serviceFromEpochRow(row));
    }
    if (listed.rows.length < pageSize) break;
    after = (listed.rows[listed.rows.length - 1] as { id: number }).id;
  }
  const next = cursor.rows[0]?.next;
  if (next === undefined) throw new CellDbError('cell_db.race', 'cursor query returned nothing');
  return {
    hosts: r.rows.map((row) => ({ node: toComputeNodeRecord(row), service: serviceFromJson(row.service) })),
    services,
    heartbeats,
    serviceVersions: versions,
    nodeVersions,
    nextSince: next,
  };
}
