/**
 * Test fixture for the allocation-candidates functional tests: a migrated throwaway
 * placement database and a small builder that writes providers, inventories, traits,
 * aggregates and allocations straight into it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import type { Pool } from 'pg';

/** Inventory fields; omitted ones take Placement's defaults. */
export interface InventorySpec {
  total: number;
  reserved?: number;
  min_unit?: number;
  max_unit?: number;
  step_size?: number;
  allocation_ratio?: number;
}

export interface ProviderSpec {
  parent?: ProviderRef;
  inventories?: Record<string, InventorySpec>;
  traits?: string[];
  aggregates?: string[];
}

export interface ProviderRef {
  readonly id: number;
  readonly uuid: string;
  readonly rootId: number;
  readonly name: string;
}

/** Creates the migrated database of one test file. */
export async function placementTestDatabase(prefix: string): Promise<TestDatabase> {
  return createTestDatabase({ kind: 'placement', migrationsDir: join(__dirname, '../../migrations'), prefix });
}

async function idOf(pool: Pool, table: 'traits' | 'resource_classes', name: string): Promise<number> {
  await pool.query(`INSERT INTO ${table} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [name]);
  const r = await pool.query<{ id: number }>(`SELECT id FROM ${table} WHERE name = $1`, [name]);
  return (r.rows[0] as { id: number }).id;
}

async function aggregateId(pool: Pool, uuid: string): Promise<number> {
  await pool.query('INSERT INTO placement_aggregates (uuid) VALUES ($1) ON CONFLICT (uuid) DO NOTHING', [uuid]);
  const r = await pool.query<{ id: number }>('SELECT id FROM placement_aggregates WHERE uuid = $1', [uuid]);
  return (r.rows[0] as { id: number }).id;
}

/** Writes providers (and what hangs off them) directly with SQL. */
export class ProviderBuilder {
  constructor(private readonly pool: Pool) {}

  /** Creates a provider named `name` (uuid random) with everything in `spec`. */
  async provider(name: string, spec: ProviderSpec = {}): Promise<ProviderRef> {
    const uuid = randomUUID();
    const r = await this.pool.query<{ id: number }>(
      'INSERT INTO resource_providers (uuid, name, parent_provider_id) VALUES ($1, $2, $3) RETURNING id',
      [uuid, name, spec.parent?.id ?? null],
    );
    const id = (r.rows[0] as { id: number }).id;
    const rootId = spec.parent?.rootId ?? id;
    await this.pool.query('UPDATE resource_providers SET root_provider_id = $2 WHERE id = $1', [id, rootId]);
    for (const [rc, inv] of Object.entries(spec.inventories ?? {})) await this.inventory(id, rc, inv);
    for (const t of spec.traits ?? []) {
      await this.pool.query('INSERT INTO resource_provider_traits VALUES ($1, $2)', [id, await idOf(this.pool, 'traits', t)]);
    }
    for (const a of spec.aggregates ?? []) {
      await this.pool.query('INSERT INTO resource_provider_aggregates VALUES ($1, $2)', [id, await aggregateId(this.pool, a)]);
    }
    return { id, uuid, rootId, name };
  }

  private async inventory(rpId: number, rc: string, inv: InventorySpec): Promise<void> {
    await this.pool.query(
      `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        rpId,
        await idOf(this.pool, 'resource_classes', rc),
        inv.total,
        inv.reserved ?? 0,
        inv.min_unit ?? 1,
        inv.max_unit ?? inv.total,
        inv.step_size ?? 1,
        inv.allocation_ratio ?? 1,
      ],
    );
  }

  /** Records `used` of class `rc` on `rp` for a new consumer. */
  async allocate(rp: ProviderRef, rc: string, used: number): Promise<void> {
    await this.pool.query('INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES ($1, $2, $3, $4)', [
      rp.id,
      randomUUID(),
      await idOf(this.pool, 'resource_classes', rc),
      used,
    ]);
  }

  /** Removes every provider and what hangs off them (standard names stay). */
  async clear(): Promise<void> {
    await this.pool.query(
      'TRUNCATE allocations, inventories, resource_provider_traits, resource_provider_aggregates, placement_aggregates, resource_providers RESTART IDENTITY CASCADE',
    );
  }
}
