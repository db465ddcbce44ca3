import { rows, type Db } from './db';

/** One allocation row with its provider and consumer context. */
export interface AllocationRow {
  rp_uuid: string;
  rp_generation: number;
  rc: string;
  used: number;
  consumer_uuid: string;
  consumer_generation: number | null;
  project: string | null;
  user: string | null;
  consumer_type: string | null;
  created_at: Date;
  updated_at: Date | null;
}

const SELECT = `SELECT rp.uuid::text AS rp_uuid, rp.generation AS rp_generation, rc.name AS rc, a.used, a.consumer_id::text AS consumer_uuid,
    c.generation AS consumer_generation, p.external_id AS project, u.external_id AS user, ct.name AS consumer_type, a.created_at, a.updated_at
  FROM allocations a
  JOIN resource_providers rp ON rp.id = a.resource_provider_id
  JOIN resource_classes rc ON rc.id = a.resource_class_id
  LEFT JOIN consumers c ON c.uuid = a.consumer_id
  LEFT JOIN projects p ON p.id = c.project_id
  LEFT JOIN users u ON u.id = c.user_id
  LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id`;

/** All allocations of a consumer (empty when it has none). */
export async function consumerAllocations(db: Db, consumerUuid: string): Promise<AllocationRow[]> {
  return rows<AllocationRow>(db, `${SELECT} WHERE a.consumer_id = $1 ORDER BY a.id`, [consumerUuid]);
}

/** All allocations against a provider. */
export async function providerAllocations(db: Db, rpId: number): Promise<AllocationRow[]> {
  return rows<AllocationRow>(db, `${SELECT} WHERE a.resource_provider_id = $1 ORDER BY a.id`, [rpId]);
}

/** Per-class usage of a provider: every inventory class, 0 when unallocated. */
export async function providerUsages(db: Db, rpId: number): Promise<Record<string, number>> {
  const r = await rows<{ rc: string; used: string }>(
    db,
    `SELECT rc.name AS rc, COALESCE(sum(a.used), 0) AS used FROM inventories i
    JOIN resource_classes rc ON rc.id = i.resource_class_id
    LEFT JOIN allocations a ON a.resource_provider_id = i.resource_provider_id AND a.resource_class_id = i.resource_class_id
    WHERE i.resource_provider_id = $1 GROUP BY rc.id, rc.name ORDER BY rc.id`,
    [rpId],
  );
  return Object.fromEntries(r.map((x) => [x.rc, Number(x.used)]));
}

/** Filter of GET /usages. `consumerType`: undefined = no grouping (pre-1.38). */
export interface TotalUsageFilter {
  readonly projectId: string;
  readonly userId?: string;
  readonly consumerType?: string;
  readonly byType: boolean;
}

/**
 * Usages summed by class for a project (and user). From 1.38 (`byType`) they are grouped
 * by consumer type (`unknown` for untyped consumers, `all` when asked) with a distinct
 * consumer count per group: two valid GROUP BY queries (sums, then distinct consumers),
 * where Placement 8.0's single query fails on PostgreSQL.
 */
export async function totalUsages(db: Db, f: TotalUsageFilter): Promise<Record<string, unknown>> {
  const values: unknown[] = [f.projectId];
  const where = ['p.external_id = $1'];
  if (f.userId) {
    values.push(f.userId);
    where.push(`u.external_id = $${values.length}`);
  }
  if (f.byType && f.consumerType === 'unknown') where.push('c.consumer_type_id IS NULL');
  else if (f.byType && f.consumerType !== undefined && f.consumerType !== 'all') {
    values.push(f.consumerType);
    where.push(`ct.name = $${values.length}`);
  }
  const from = `FROM allocations a JOIN consumers c ON c.uuid = a.consumer_id JOIN projects p ON p.id = c.project_id
    JOIN users u ON u.id = c.user_id LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id
    JOIN resource_classes rc ON rc.id = a.resource_class_id WHERE ${where.join(' AND ')}`;
  if (!f.byType) {
    const r = await rows<{ rc: string; used: string }>(
      db,
      `SELECT rc.name AS rc, sum(a.used) AS used ${from} GROUP BY rc.id, rc.name ORDER BY rc.id`,
      values,
    );
    return Object.fromEntries(r.map((x) => [x.rc, Number(x.used)]));
  }
  const typeExpr = f.consumerType === 'all' ? `'all'::text` : `COALESCE(ct.name, 'unknown')`;
  const sums = await rows<{ t: string; rc: string; used: string }>(
    db,
    `SELECT ${typeExpr} AS t, rc.name AS rc, sum(a.used) AS used ${from} GROUP BY 1, rc.id, rc.name ORDER BY 1, rc.id`,
    values,
  );
  const counts = await rows<{ t: string; n: string }>(
    db,
    `SELECT ${typeExpr} AS t, count(DISTINCT a.consumer_id) AS n ${from} GROUP BY 1`,
    values,
  );
  const out: Record<string, Record<string, number>> = {};
  for (const x of sums) (out[x.t] ??= {})[x.rc] = Number(x.used);
  for (const x of counts) {
    const g = out[x.t];
    if (g) g.consumer_count = Number(x.n);
  }
  return out;
}
