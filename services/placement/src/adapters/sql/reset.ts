import type { Queryable } from '@cellsched/db';

// NOTE: `TRUNCATE ... CASCADE` leaves the snapshot's change log a 'f' row (migration 003's
// statement trigger), so every running placement reloads its allocation-candidates snapshot.
const RESET_SQL = `DO $$ BEGIN
  TRUNCATE allocations, consumers, projects, users, consumer_types, inventories, resource_provider_aggregates,
    placement_aggregates, resource_provider_traits, resource_providers RESTART IDENTITY CASCADE;
  DELETE FROM traits WHERE name LIKE 'CUSTOM\\_%';
  DELETE FROM resource_classes WHERE name LIKE 'CUSTOM\\_%';
END $$;`;

/**
 * Empties placement's database but for what a fresh install has: the standard resource classes
 * and traits, and the migration record. Providers (inventories, traits, aggregates), allocations
 * and consumers (with their projects, users and types) go, and so do the custom classes and
 * traits. One statement, so all or nothing; idempotent. The schema must exist (placement
 * migrated it at its first start).
 */
export async function resetPlacementData(db: Queryable): Promise<void> {
  await db.query(RESET_SQL);
}
