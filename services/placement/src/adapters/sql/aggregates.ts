import { rows, type Db } from './db';
import { bumpGeneration, type ResourceProvider } from './resource-providers';

/** Aggregate uuids of a provider. */
export async function providerAggregates(db: Db, rpId: number): Promise<string[]> {
  const r = await rows<{ uuid: string }>(
    db,
    `SELECT ag.uuid::text AS uuid FROM resource_provider_aggregates rpa
    JOIN placement_aggregates ag ON ag.id = rpa.aggregate_id WHERE rpa.resource_provider_id = $1 ORDER BY ag.id`,
    [rpId],
  );
  return r.map((x) => x.uuid);
}

/**
 * Replace a (locked) provider's aggregates, creating unknown aggregates; with
 * `bumpFrom` (1.19+) the generation must still be that value and is incremented.
 * Returns the provider's generation afterwards. Idempotent for the same set.
 */
export async function setProviderAggregates(
  db: Db,
  rp: ResourceProvider,
  uuids: readonly string[],
  bumpFrom: number | undefined,
): Promise<number> {
  const wanted = [...new Set(uuids.map((u) => u.toLowerCase()))];
  if (wanted.length > 0) {
    await db.query('INSERT INTO placement_aggregates (uuid) SELECT unnest($1::uuid[]) ON CONFLICT (uuid) DO NOTHING', [wanted]);
  }
  await db.query(
    `DELETE FROM resource_provider_aggregates rpa USING placement_aggregates ag
    WHERE rpa.aggregate_id = ag.id AND rpa.resource_provider_id = $1 AND NOT (ag.uuid = ANY($2::uuid[]))`,
    [rp.id, wanted],
  );
  await db.query(
    `INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id)
    SELECT $1, id FROM placement_aggregates WHERE uuid = ANY($2::uuid[]) ON CONFLICT DO NOTHING`,
    [rp.id, wanted],
  );
  return bumpFrom === undefined ? rp.generation : bumpGeneration(db, rp, bumpFrom);
}
