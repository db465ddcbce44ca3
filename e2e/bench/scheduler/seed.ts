/**
 * Seeds a cloud straight into its databases with a few set-based statements (fast enough for
 * 10,000 hosts): per cell, `services` + `compute_nodes` rows as a compute would have written
 * them; in placement, one root provider per compute node (uuid = compute node uuid) with VCPU,
 * MEMORY_MB and DISK_GB inventories; in the API DB (when given, its cell mappings already made), one host
 * mapping per host, as discover_hosts leaves them (the scheduler never chooses an unmapped host). Used by `pnpm bench scheduler` and by the scheduler's functional tests.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

/** One compute host (one node per host, as the libvirt driver). */
export interface HostSpec {
  readonly host: string;
  /** Index into the cells given to {@link seedHosts}. */
  readonly cell: number;
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly diskGb: number;
  readonly disabled?: boolean;
  readonly forcedDown?: boolean;
  /** Last heartbeat; default now. */
  readonly lastSeenUp?: Date;
  readonly uuid?: string;
  /** Nova's cpu_info as the compute reports it (JSON text); default `{}`. */
  readonly cpuInfo?: string;
}

/** A seeded host: its compute node (= root provider) uuid. */
export interface SeededHost extends HostSpec {
  readonly uuid: string;
}

async function seedCell(db: Pool, hosts: readonly SeededHost[]): Promise<void> {
  if (hosts.length === 0) return;
  await db.query(
    `WITH t AS (SELECT * FROM unnest($1::text[], $2::bool[], $3::bool[], $4::timestamptz[], $5::uuid[], $6::int[], $7::int[], $8::int[], $9::text[])
                  AS t(host, disabled, forced, seen, uuid, vcpus, mem, disk, cpu_info)),
     s AS (INSERT INTO services (uuid, host, "binary", topic, disabled, disabled_reason, forced_down, last_seen_up, report_count)
           SELECT gen_random_uuid(), host, 'nova-compute', 'compute', disabled, CASE WHEN disabled THEN 'seeded disabled' END, forced, seen, 1 FROM t
           RETURNING id, host)
     INSERT INTO compute_nodes (uuid, service_id, host, hypervisor_hostname, vcpus, memory_mb, local_gb, hypervisor_type, hypervisor_version,
       cpu_allocation_ratio, supported_instances, cpu_info, mapped)
     SELECT t.uuid, s.id, t.host, t.host, t.vcpus, t.mem, t.disk, 'qemu', 6002000, 1.0, '[["x86_64","qemu","hvm"]]'::jsonb, t.cpu_info, 1
     FROM t JOIN s USING (host)`,
    [
      hosts.map((h) => h.host),
      hosts.map((h) => h.disabled ?? false),
      hosts.map((h) => h.forcedDown ?? false),
      hosts.map((h) => h.lastSeenUp ?? new Date()),
      hosts.map((h) => h.uuid),
      hosts.map((h) => h.vcpus),
      hosts.map((h) => h.memoryMb),
      hosts.map((h) => h.diskGb),
      hosts.map((h) => h.cpuInfo ?? '{}'),
    ],
  );
}

async function seedPlacement(db: Pool, hosts: readonly SeededHost[]): Promise<void> {
  await db.query(`INSERT INTO resource_providers (uuid, name, generation) SELECT u, n, 1 FROM unnest($1::uuid[], $2::text[]) AS t(u, n)`, [
    hosts.map((h) => h.uuid),
    hosts.map((h) => h.host),
  ]);
  await db.query('UPDATE resource_providers SET root_provider_id = id WHERE root_provider_id IS NULL');
  await db.query(
    `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)
     SELECT rp.id, rc.id, CASE rc.name WHEN 'VCPU' THEN t.vcpus WHEN 'MEMORY_MB' THEN t.mem ELSE t.disk END, 0, 1,
            CASE rc.name WHEN 'VCPU' THEN t.vcpus WHEN 'MEMORY_MB' THEN t.mem ELSE t.disk END, 1, 1.0
     FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int[]) AS t(uuid, vcpus, mem, disk)
     JOIN resource_providers rp ON rp.uuid = t.uuid
     CROSS JOIN resource_classes rc WHERE rc.name IN ('VCPU', 'MEMORY_MB', 'DISK_GB')`,
    [hosts.map((h) => h.uuid), hosts.map((h) => h.vcpus), hosts.map((h) => h.memoryMb), hosts.map((h) => h.diskGb)],
  );
}

/** The API DB and the uuid of each cell given to {@link seedHosts} (same order). */
export interface SeedApi {
  readonly db: Pool;
  readonly cellUuids: readonly string[];
}

/**
 * Host mappings (a host seeded again moves to its new cell). The cells' mappings must exist (the
 * scheduler opens every cell it finds in cell_mappings, so a placeholder mapping would be a cell
 * it cannot reach); a host of a cell without one is not mapped.
 */
async function seedHostMappings(api: SeedApi, hosts: readonly SeededHost[]): Promise<void> {
  await api.db.query(
    `INSERT INTO host_mappings (cell_id, host) SELECT c.id, t.host FROM unnest($1::text[], $2::uuid[]) AS t(host, cell) JOIN cell_mappings c ON c.uuid = t.cell
     ON CONFLICT (host) DO UPDATE SET cell_id = EXCLUDED.cell_id`,
    [hosts.map((h) => h.host), hosts.map((h) => api.cellUuids[h.cell])],
  );
}

/** Writes the hosts into their cells, placement and (with `api`) the API DB's host mappings, in batches of 2,000. Returns them with their uuids. */
export async function seedHosts(cells: readonly Pool[], placement: Pool, specs: readonly HostSpec[], api?: SeedApi): Promise<SeededHost[]> {
  const hosts = specs.map((s) => ({ ...s, uuid: s.uuid ?? randomUUID() }));
  for (let i = 0; i < hosts.length; i += 2000) {
    const batch = hosts.slice(i, i + 2000);
    await Promise.all(
      cells.map((db, c) =>
        seedCell(
          db,
          batch.filter((h) => h.cell === c),
        ),
      ),
    );
    await seedPlacement(placement, batch);
    if (api !== undefined) await seedHostMappings(api, batch);
  }
  return hosts;
}

/** `n` identical hosts `prefix-<i>` spread round-robin over `cellCount` cells. */
export function uniformHosts(
  n: number,
  cellCount: number,
  size: { vcpus: number; memoryMb: number; diskGb: number },
  prefix = 'cmp',
): HostSpec[] {
  return Array.from({ length: n }, (_, i) => ({ host: `${prefix}-${String(i).padStart(5, '0')}`, cell: i % cellCount, ...size }));
}

/** Placement's view of usage: provider uuid -> resource class -> used, and consumer -> providers. */
export async function placementUsage(placement: Pool): Promise<{
  overCapacity: { uuid: string; rc: string; used: number; capacity: number }[];
  consumers: Map<string, string[]>;
}> {
  const over = await placement.query<{ uuid: string; rc: string; used: string; capacity: string }>(
    `SELECT rp.uuid::text, rc.name AS rc, sum(a.used)::text AS used, ((i.total - i.reserved) * i.allocation_ratio)::text AS capacity
     FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id
     JOIN inventories i ON i.resource_provider_id = a.resource_provider_id AND i.resource_class_id = a.resource_class_id
     GROUP BY rp.uuid, rc.name, i.total, i.reserved, i.allocation_ratio HAVING sum(a.used) > (i.total - i.reserved) * i.allocation_ratio`,
  );
  const rows = await placement.query<{ consumer: string; providers: string[] }>(
    `SELECT a.consumer_id::text AS consumer, array_agg(DISTINCT rp.uuid::text) AS providers
     FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id GROUP BY a.consumer_id`,
  );
  return {
    overCapacity: over.rows.map((r) => ({ uuid: r.uuid, rc: r.rc, used: Number(r.used), capacity: Number(r.capacity) })),
    consumers: new Map(rows.rows.map((r) => [r.consumer, r.providers])),
  };
}
