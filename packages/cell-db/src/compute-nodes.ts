import { CellDbError, checkUuid, checkUuids, type Queryable } from './db';

/** `[architecture, hypervisor_type, vm_mode]`, as Nova's supported_instances. */
export type SupportedInstanceTriple = readonly [string, string, string];

/** Nova's ComputeNode record (one hypervisor node of a compute host). `uuid` = its root resource provider. */
export interface ComputeNodeRecord {
  readonly id: number;
  readonly uuid: string;
  readonly serviceId: number | null;
  readonly host: string;
  readonly hypervisorHostname: string;
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly localGb: number;
  readonly vcpusUsed: number;
  readonly memoryMbUsed: number;
  readonly localGbUsed: number;
  readonly hypervisorType: string;
  readonly hypervisorVersion: number;
  readonly cpuAllocationRatio: number;
  readonly ramAllocationRatio: number;
  readonly diskAllocationRatio: number;
  readonly runningVms: number;
  readonly supportedInstances: readonly SupportedInstanceTriple[];
  /** Nova's stats, e.g. `{ num_instances: "3", io_workload: "1", failed_builds: "0" }`. */
  readonly stats: Readonly<Record<string, string>>;
  /** Nova's cpu_info: JSON text as the compute reported it (`{}` when it did not). */
  readonly cpuInfo: string;
  readonly mapped: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
}

interface Row {
  id: number;
  uuid: string;
  service_id: number | null;
  host: string;
  hypervisor_hostname: string;
  vcpus: number;
  memory_mb: number;
  local_gb: number;
  vcpus_used: number;
  memory_mb_used: number;
  local_gb_used: number;
  hypervisor_type: string;
  hypervisor_version: number;
  cpu_allocation_ratio: number;
  ram_allocation_ratio: number;
  disk_allocation_ratio: number;
  running_vms: number;
  supported_instances: SupportedInstanceTriple[];
  stats: Record<string, string>;
  cpu_info: string;
  mapped: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}
const COLUMNS = `id, uuid, service_id, host, hypervisor_hostname, vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used, local_gb_used,
  hypervisor_type, hypervisor_version, cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio, running_vms, supported_instances,
  stats, cpu_info, mapped, created_at, updated_at, deleted_at`;
const toNode = (r: Row): ComputeNodeRecord => ({
  id: r.id,
  uuid: r.uuid,
  serviceId: r.service_id,
  host: r.host,
  hypervisorHostname: r.hypervisor_hostname,
  vcpus: r.vcpus,
  memoryMb: r.memory_mb,
  localGb: r.local_gb,
  vcpusUsed: r.vcpus_used,
  memoryMbUsed: r.memory_mb_used,
  localGbUsed: r.local_gb_used,
  hypervisorType: r.hypervisor_type,
  hypervisorVersion: r.hypervisor_version,
  cpuAllocationRatio: r.cpu_allocation_ratio,
  ramAllocationRatio: r.ram_allocation_ratio,
  diskAllocationRatio: r.disk_allocation_ratio,
  runningVms: r.running_vms,
  supportedInstances: r.supported_instances,
  stats: r.stats,
  cpuInfo: r.cpu_info,
  mapped: r.mapped,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/** What a compute reports about one of its nodes (Nova's resource tracker update). */
export interface ComputeNodeReport {
  uuid: string;
  serviceId: number | null;
  host: string;
  hypervisorHostname: string;
  vcpus: number;
  memoryMb: number;
  localGb: number;
  vcpusUsed?: number;
  memoryMbUsed?: number;
  localGbUsed?: number;
  hypervisorType?: string;
  hypervisorVersion?: number;
  cpuAllocationRatio?: number;
  ramAllocationRatio?: number;
  diskAllocationRatio?: number;
  runningVms?: number;
  supportedInstances?: readonly SupportedInstanceTriple[];
  stats?: Readonly<Record<string, string>>;
  /** JSON text (Nova's cpu_info); `{}` when not said. */
  cpuInfo?: string;
}

function validate(n: ComputeNodeReport): void {
  const problems: string[] = [];
  if (n.host === '' || n.hypervisorHostname === '') problems.push('host and hypervisor_hostname must not be empty');
  for (const [what, v] of [
    ['vcpus', n.vcpus],
    ['memory_mb', n.memoryMb],
    ['local_gb', n.localGb],
    ['vcpus_used', n.vcpusUsed],
    ['memory_mb_used', n.memoryMbUsed],
    ['local_gb_used', n.localGbUsed],
    ['running_vms', n.runningVms],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) problems.push(`${what} must be a non-negative integer`);
  }
  for (const [what, v] of [
    ['cpu', n.cpuAllocationRatio],
    ['ram', n.ramAllocationRatio],
    ['disk', n.diskAllocationRatio],
  ] as const) {
    if (v !== undefined && !(v > 0)) problems.push(`${what}_allocation_ratio must be > 0`);
  }
  if (n.cpuInfo !== undefined && !isJsonObject(n.cpuInfo)) problems.push('cpu_info must be a JSON object');
  if (problems.length > 0) throw new CellDbError('cell_db.compute_node.invalid', `invalid compute node: ${problems.join('; ')}`);
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * Creates or updates a compute node by uuid (the resource tracker's periodic update).
 * Idempotent: the same report twice leaves the same row (only updated_at moves). Keeps
 * `mapped` and undeletes a soft-deleted node. Bad values throw `cell_db.compute_node.invalid`;
 * another live node with the same (host, hypervisor_hostname) is a unique violation (23505).
 */
export async function upsertComputeNode(db: Queryable, n: ComputeNodeReport): Promise<{ node: ComputeNodeRecord; created: boolean }> {
  validate(n);
  const r = await db.query<Row & { created: boolean }>(
    `INSERT INTO compute_nodes AS c (uuid, service_id, host, hypervisor_hostname, vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used,
       local_gb_used, hypervisor_type, hypervisor_version, cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio, running_vms,
       supported_instances, stats, cpu_info)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (uuid) DO UPDATE SET service_id = EXCLUDED.service_id, host = EXCLUDED.host, hypervisor_hostname = EXCLUDED.hypervisor_hostname,
       vcpus = EXCLUDED.vcpus, memory_mb = EXCLUDED.memory_mb, local_gb = EXCLUDED.local_gb, vcpus_used = EXCLUDED.vcpus_used,
       memory_mb_used = EXCLUDED.memory_mb_used, local_gb_used = EXCLUDED.local_gb_used, hypervisor_type = EXCLUDED.hypervisor_type,
       hypervisor_version = EXCLUDED.hypervisor_version, cpu_allocation_ratio = EXCLUDED.cpu_allocation_ratio,
       ram_allocation_ratio = EXCLUDED.ram_allocation_ratio, disk_allocation_ratio = EXCLUDED.disk_allocation_ratio,
       running_vms = EXCLUDED.running_vms, supported_instances = EXCLUDED.supported_instances, stats = EXCLUDED.stats,
       cpu_info = EXCLUDED.cpu_info, deleted_at = NULL, updated_at = now()
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    [
      checkUuid(n.uuid, 'compute node uuid'),
      n.serviceId,
      n.host,
      n.hypervisorHostname,
      n.vcpus,
      n.memoryMb,
      n.localGb,
      n.vcpusUsed ?? 0,
      n.memoryMbUsed ?? 0,
      n.localGbUsed ?? 0,
      n.hypervisorType ?? 'fake',
      n.hypervisorVersion ?? 0,
      n.cpuAllocationRatio ?? 4.0,
      n.ramAllocationRatio ?? 1.0,
      n.diskAllocationRatio ?? 1.0,
      n.runningVms ?? 0,
      JSON.stringify(n.supportedInstances ?? []),
      JSON.stringify(n.stats ?? {}),
      n.cpuInfo ?? '{}',
    ],
  );
  const row = r.rows[0];
  if (row === undefined) throw new CellDbError('cell_db.compute_node.race', 'compute node upsert returned nothing');
  return { node: toNode(row), created: row.created };
}

/**
 * Merges keys into a node's stats (e.g. `failed_builds` after a build failure or success).
 * Idempotent for equal values. Returns false if the node is unknown or deleted.
 */
export async function updateComputeNodeStats(db: Queryable, uuid: string, stats: Readonly<Record<string, string>>): Promise<boolean> {
  const r = await db.query(
    'UPDATE compute_nodes SET stats = stats || $2::jsonb, updated_at = now() WHERE uuid = $1 AND deleted_at IS NULL',
    [checkUuid(uuid, 'compute node uuid'), JSON.stringify(stats)],
  );
  return (r.rowCount ?? 0) > 0;
}

/** One node's resource tracker stats for {@link updateComputeNodesStats}. */
export interface NodeStats {
  readonly uuid: string;
  /** Keys to set (values replace the node's; keys not named are kept). */
  readonly stats: Readonly<Record<string, string>>;
  readonly runningVms: number;
}

/**
 * The resource tracker's stats of many nodes in one statement (a compute process's periodic
 * update): each node's stats merged with the given keys, running_vms set. Deleted or unknown
 * nodes are skipped, and so is a node whose row already says all of it (no write, updated_at
 * kept: the schedulers' caches read nothing again). Returns how many nodes were written.
 */
export async function updateComputeNodesStats(db: Queryable, nodes: readonly NodeStats[]): Promise<number> {
  if (nodes.length === 0) return 0;
  checkUuids(
    nodes.map((n) => n.uuid),
    'compute node uuid',
  );
  const bad = nodes.filter((n) => !Number.isSafeInteger(n.runningVms) || n.runningVms < 0);
  if (bad.length > 0)
    throw new CellDbError(
      'cell_db.compute_node.invalid',
      `invalid compute node: running_vms must be a non-negative integer (${bad.map((n) => n.uuid).join(', ')})`,
    );
  const r = await db.query(
    `UPDATE compute_nodes c SET stats = c.stats || x.stats, running_vms = x.running_vms, updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS x(uuid uuid, stats jsonb, running_vms integer)
     WHERE c.uuid = x.uuid AND c.deleted_at IS NULL AND (NOT c.stats @> x.stats OR c.running_vms IS DISTINCT FROM x.running_vms)`,
    [JSON.stringify(nodes.map((n) => ({ uuid: n.uuid, stats: n.stats, running_vms: n.runningVms })))],
  );
  return r.rowCount ?? 0;
}

/** The compute node with this uuid (deleted ones only with `includeDeleted`), or undefined. Read-only. */
export async function getComputeNode(
  db: Queryable,
  uuid: string,
  opts: { includeDeleted?: boolean } = {},
): Promise<ComputeNodeRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM compute_nodes WHERE uuid = $1 AND ($2 OR deleted_at IS NULL)`, [
    checkUuid(uuid, 'compute node uuid'),
    opts.includeDeleted ?? false,
  ]);
  return r.rows[0] === undefined ? undefined : toNode(r.rows[0]);
}

/**
 * Live compute nodes (deleted ones too with `includeDeleted`), optionally of one host, these
 * uuids, one service, or only those not mapped yet (`unmapped`: discover_hosts' work, read through
 * the partial index on `mapped = 0`); by host and hypervisor hostname. Read-only.
 */
export async function listComputeNodes(
  db: Queryable,
  opts: { host?: string; uuids?: readonly string[]; serviceId?: number; unmapped?: boolean; includeDeleted?: boolean } = {},
): Promise<ComputeNodeRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown): void => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (opts.includeDeleted !== true) where.push('deleted_at IS NULL');
  if (opts.unmapped === true) where.push('mapped = 0'); // NOTE: a literal, so the partial index on mapped = 0 is used
  if (opts.host !== undefined) add('host = ?', opts.host);
  if (opts.uuids !== undefined) add('uuid = ANY(?::uuid[])', checkUuids(opts.uuids, 'compute node uuid'));
  if (opts.serviceId !== undefined) add('service_id = ?', opts.serviceId);
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM compute_nodes ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY host, hypervisor_hostname`,
    params,
  );
  return r.rows.map(toNode);
}

/** Soft-deletes a compute node (bumping updated_at so caches see it go). Idempotent: returns whether it was live. */
export async function deleteComputeNode(db: Queryable, uuid: string): Promise<boolean> {
  const r = await db.query('UPDATE compute_nodes SET deleted_at = now(), updated_at = now() WHERE uuid = $1 AND deleted_at IS NULL', [
    checkUuid(uuid, 'compute node uuid'),
  ]);
  return (r.rowCount ?? 0) > 0;
}

/** Hosts of live compute nodes not yet mapped (`mapped = 0`), sorted, distinct. Read-only. */
export async function listUnmappedComputeHosts(db: Queryable): Promise<string[]> {
  const r = await db.query<{ host: string }>(
    'SELECT DISTINCT host FROM compute_nodes WHERE mapped = 0 AND deleted_at IS NULL ORDER BY host',
  );
  return r.rows.map((row) => row.host);
}

/** Sets `mapped = 1` on the live nodes of these hosts (after their host mappings exist). Idempotent: returns how many nodes changed. */
export async function markComputeNodesMapped(db: Queryable, hosts: readonly string[]): Promise<number> {
  const r = await db.query('UPDATE compute_nodes SET mapped = 1 WHERE host = ANY($1::text[]) AND mapped = 0 AND deleted_at IS NULL', [
    [...hosts],
  ]);
  return r.rowCount ?? 0;
}

/**
 * Sets `mapped = 0` on the live nodes of these hosts, or of every host when `hosts` is
 * undefined (Nova's delete_host / delete_cell --force, so discover_hosts finds them again).
 * Idempotent: returns how many nodes changed.
 */
export async function unmarkComputeNodesMapped(db: Queryable, hosts?: readonly string[]): Promise<number> {
  const r = await db.query(
    'UPDATE compute_nodes SET mapped = 0 WHERE ($1::text[] IS NULL OR host = ANY($1)) AND mapped <> 0 AND deleted_at IS NULL',
    [hosts === undefined ? null : [...hosts]],
  );
  return r.rowCount ?? 0;
}

/** Maps a row selected with {@link COMPUTE_NODE_COLUMNS}. */
export function toComputeNodeRecord(r: Row): ComputeNodeRecord {
  return toNode(r);
}
export const COMPUTE_NODE_COLUMNS = COLUMNS;
export type { Row as ComputeNodeRow };
