import { withTransaction } from '@cellsched/db';
import type { Pool } from 'pg';
import { capacityOf, checkUnits } from '../../domain/capacity';
import { badRequest, concurrentUpdate, PlacementError } from '../../domain/errors';
import { rows, type Db } from './db';
import {
  deleteConsumersWithoutAllocations, ensureConsumerRefs, INCOMPLETE_CONSUMER_ID, insertConsumer,
  lockConsumer, type ConsumerRow,
} from './consumers';

/** The allocations one consumer should hold after the write (empty `allocations` = release all). */
export interface ConsumerAllocationsInput {
  readonly consumerUuid: string;
  /** External project/user ids; undefined → Placement's incomplete-consumer ids (pre-1.8 writes). */
  readonly projectId?: string;
  readonly userId?: string;
  /** Expected consumer generation (null = the consumer must not exist yet); checked when `checkConsumerGeneration`. */
  readonly consumerGeneration?: number | null;
  /** Consumer type (1.38+); undefined leaves an existing consumer's type alone. */
  readonly consumerType?: string;
  /** Amounts per provider uuid and resource class name. */
  readonly allocations: ReadonlyArray<{ readonly providerUuid: string; readonly resources: Readonly<Record<string, number>> }>;
}

/** How to write. */
export interface WriteAllocationsOptions {
  /** Compare `consumerGeneration` with the stored one (Placement 1.28+). */
  readonly checkConsumerGeneration: boolean;
  /** Retries of serialization failures / deadlocks (default 5). */
  readonly maxAttempts?: number;
}

/** Detail of a 409 for lack of capacity, for callers that branch on it (gRPC). */
export interface CapacityFailure { readonly kind: 'capacity_exceeded' | 'constraints_violated' | 'no_inventory'; readonly resourceClass: string; readonly providerUuid: string }

/** 400 of `writeAllocations` for a resource class that does not exist (handlers word it). */
export class UnknownResourceClass extends PlacementError {
  constructor(readonly resourceClass: string) { super(400, `No such resource class ${resourceClass}.`); }
}

/** A 409 of `writeAllocations` that says which class and provider ran out. */
export class AllocationConflict extends PlacementError {
  constructor(readonly failure: CapacityFailure, detail: string) { super(409, detail); }
}

interface Row { rpId: number; rpUuid: string; rcId: number; rcName: string; used: number }
interface InvRow { rp_id: number; rc_id: number; total: number; reserved: number; min_unit: number; max_unit: number; step_size: number; allocation_ratio: number; used: string | null }

/**
 * Atomically replace the allocations of every listed consumer (PUT /allocations/{c},
 * POST /allocations, reshaper, gRPC claim/move/release) in ONE PostgreSQL transaction:
 * locks the consumers then every touched provider (FOR UPDATE, sorted, so writers
 * serialize per provider and never deadlock among themselves), removes the consumers'
 * old allocations, checks each new amount against min_unit/max_unit/step_size and
 * `used + amount <= (total - reserved) * allocation_ratio`, inserts, bumps every touched
 * provider's generation and each consumer's generation, and deletes consumers left
 * without allocations. All or nothing; usage can never exceed capacity.
 *
 * Errors (nothing written): 400 unknown provider or resource class; 409
 * `placement.concurrent_update` on a consumer generation mismatch (safe to re-read and
 * retry); {@link AllocationConflict} (409, `placement.undefined_code` like Placement)
 * naming the class and provider without room or inventory (retrying the same request is
 * pointless until usage changes). Idempotent: writing the same allocations twice leaves
 * the same state (generations aside).
 */
export async function writeAllocations(pool: Pool, consumers: readonly ConsumerAllocationsInput[], opts: WriteAllocationsOptions): Promise<void> {
  await withTransaction(pool, (c) => writeAllocationsIn(c, consumers, opts), { maxAttempts: opts.maxAttempts ?? 5 });
}

/**
 * Same as {@link writeAllocations} inside a caller's transaction (reshaper). Round trips:
 * resolve (1), per consumer refs + lock (2, +1 when new), lock providers (1), check (1), write (1).
 */
export async function writeAllocationsIn(db: Db, consumers: readonly ConsumerAllocationsInput[], opts: WriteAllocationsOptions): Promise<void> {
  const wanted = await resolve(db, consumers);
  const sorted = [...consumers].sort((a, b) => (a.consumerUuid < b.consumerUuid ? -1 : 1));
  const locked: ConsumerRow[] = [];
  for (const input of sorted) locked.push(await ensureConsumer(db, input, opts));
  const uuids = sorted.map((s) => s.consumerUuid);
  // every provider whose usage changes: the new ones and those of the consumers' old allocations
  const rpIds = (await rows<{ id: number }>(db, `SELECT id FROM resource_providers WHERE id = ANY($1::int[])
      OR id IN (SELECT resource_provider_id FROM allocations WHERE consumer_id = ANY($2::uuid[])) ORDER BY id FOR UPDATE`,
  [[...new Set(wanted.map((w) => w.rpId))], uuids])).map((r) => r.id);
  await checkCapacity(db, wanted, uuids);
  const emptied = sorted.filter((c) => c.allocations.length === 0).map((c) => c.consumerUuid);
  await applyWrite(db, wanted, uuids, rpIds, locked.filter((l) => !emptied.includes(l.uuid)).map((l) => l.id), emptied);
}

/**
 * The writes in one statement (one round trip): replace the consumers' allocations, bump
 * provider and consumer generations, delete consumers left without allocations.
 */
async function applyWrite(db: Db, wanted: readonly WantedRow[], consumers: string[], rpIds: number[], keptConsumerIds: number[], emptied: string[]): Promise<void> {
  await db.query(`WITH del AS (DELETE FROM allocations WHERE consumer_id = ANY($1::uuid[])),
      ins AS (INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
        SELECT * FROM unnest($2::int[], $3::uuid[], $4::int[], $5::int[])),
      rpg AS (UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY($6::int[])),
      cg AS (UPDATE consumers SET generation = generation + 1, updated_at = now() WHERE id = ANY($7::int[]))
    DELETE FROM consumers WHERE uuid = ANY($8::uuid[])`,
  [consumers, wanted.map((w) => w.rpId), wanted.map((w) => w.consumerUuid), wanted.map((w) => w.rcId), wanted.map((w) => w.used),
    rpIds, keptConsumerIds, emptied]);
}

type WantedRow = Row & { consumerUuid: string };

async function resolve(db: Db, consumers: readonly ConsumerAllocationsInput[]): Promise<WantedRow[]> {
  const rpUuids = [...new Set(consumers.flatMap((c) => c.allocations.map((a) => a.providerUuid)))];
  const rcNames = [...new Set(consumers.flatMap((c) => c.allocations.flatMap((a) => Object.keys(a.resources))))];
  const rps = await rows<{ id: number; uuid: string }>(db, 'SELECT id, uuid::text AS uuid FROM resource_providers WHERE uuid = ANY($1::uuid[])', [rpUuids]);
  const rpMap = new Map(rps.map((r) => [r.uuid, r.id]));
  const missingRp = rpUuids.find((u) => !rpMap.has(u));
  if (missingRp !== undefined) throw badRequest(`Allocation for resource provider '${missingRp}' that does not exist.`);
  const rcs = await rows<{ id: number; name: string }>(db, 'SELECT id, name FROM resource_classes WHERE name = ANY($1::text[])', [rcNames]);
  const rcMap = new Map(rcs.map((r) => [r.name, r.id]));
  const missingRc = rcNames.find((n) => !rcMap.has(n));
  if (missingRc !== undefined) throw new UnknownResourceClass(missingRc);
  return consumers.flatMap((c) => c.allocations.flatMap((a) => Object.entries(a.resources).map(([rc, used]) => ({
    consumerUuid: c.consumerUuid, rpId: rpMap.get(a.providerUuid) as number, rpUuid: a.providerUuid, rcId: rcMap.get(rc) as number, rcName: rc, used,
  }))));
}

async function ensureConsumer(db: Db, input: ConsumerAllocationsInput, opts: WriteAllocationsOptions): Promise<ConsumerRow> {
  const { projectId, userId, typeId } = await ensureConsumerRefs(db, input.projectId ?? INCOMPLETE_CONSUMER_ID,
    input.projectId === undefined ? INCOMPLETE_CONSUMER_ID : (input.userId ?? INCOMPLETE_CONSUMER_ID), input.consumerType);
  const existing = await lockConsumer(db, input.consumerUuid);
  if (existing === undefined) {
    if (opts.checkConsumerGeneration && input.consumerGeneration !== null && input.consumerGeneration !== undefined) {
      throw concurrentUpdate(`consumer generation conflict - expected null but got ${input.consumerGeneration}`);
    }
    return insertConsumer(db, input.consumerUuid, projectId, userId, typeId ?? null);
  }
  if (opts.checkConsumerGeneration && existing.generation !== input.consumerGeneration) {
    throw concurrentUpdate(`consumer generation conflict - expected ${existing.generation} but got ${input.consumerGeneration ?? 'None'}`);
  }
  if (existing.project_id !== projectId || existing.user_id !== userId || (typeId !== undefined && typeId !== existing.consumer_type_id)) {
    await db.query('UPDATE consumers SET project_id = $2, user_id = $3, consumer_type_id = COALESCE($4, consumer_type_id), updated_at = now() WHERE id = $1',
      [existing.id, projectId, userId, typeId ?? null]);
  }
  return existing;
}

/** Capacity and unit checks, counting current usage without the rewritten consumers' own allocations. */
async function checkCapacity(db: Db, wanted: readonly WantedRow[], consumers: string[]): Promise<void> {
  if (wanted.length === 0) return;
  const inv = await rows<InvRow>(db, `SELECT i.resource_provider_id AS rp_id, i.resource_class_id AS rc_id, i.total, i.reserved, i.min_unit, i.max_unit,
      i.step_size, i.allocation_ratio,
      (SELECT sum(a.used) FROM allocations a WHERE a.resource_provider_id = i.resource_provider_id AND a.resource_class_id = i.resource_class_id
        AND NOT (a.consumer_id = ANY($3::uuid[]))) AS used
    FROM inventories i WHERE i.resource_provider_id = ANY($1::int[]) AND i.resource_class_id = ANY($2::int[])`,
  [[...new Set(wanted.map((w) => w.rpId))], [...new Set(wanted.map((w) => w.rcId))], consumers]);
  const invMap = new Map(inv.map((r) => [`${r.rp_id}:${r.rc_id}`, r]));
  const sums = new Map<string, number>();
  for (const w of wanted) {
    const key = `${w.rpId}:${w.rcId}`;
    const r = invMap.get(key);
    if (r === undefined) throw capacityError('no_inventory', w);
    const record = { total: r.total, reserved: r.reserved, minUnit: r.min_unit, maxUnit: r.max_unit, stepSize: r.step_size, allocationRatio: r.allocation_ratio };
    if (checkUnits(record, w.used) !== undefined) throw capacityError('constraints_violated', w);
    const sum = (sums.get(key) ?? 0) + w.used;
    sums.set(key, sum);
    if (Number(r.used ?? 0) + sum > capacityOf(record)) throw capacityError('capacity_exceeded', w);
  }
}

function capacityError(kind: CapacityFailure['kind'], w: WantedRow): AllocationConflict {
  const failure = { kind, resourceClass: w.rcName, providerUuid: w.rpUuid };
  if (kind === 'no_inventory') return new AllocationConflict(failure, `Unable to allocate inventory: Inventory for '${w.rcName}' on resource provider '${w.rpUuid}' invalid.`);
  const why = kind === 'capacity_exceeded' ? 'The requested amount would exceed the capacity.' : 'The requested amount would violate inventory constraints.';
  return new AllocationConflict(failure, `Unable to allocate inventory: Unable to create allocation for '${w.rcName}' on resource provider '${w.rpUuid}'. ${why}`);
}



/**
 * Release everything a consumer holds (DELETE /allocations/{c}) and forget the consumer.
 * Returns how many allocation rows were removed (0: it held nothing; the caller answers
 * 404). Provider generations are left alone, as in Placement: freeing capacity cannot
 * overcommit anyone. Idempotent.
 */
export async function deleteConsumerAllocations(pool: Pool, consumerUuid: string): Promise<number> {
  return withTransaction(pool, async (c) => {
    await c.query(`SELECT id FROM resource_providers WHERE id IN (SELECT resource_provider_id FROM allocations WHERE consumer_id = $1)
      ORDER BY id FOR UPDATE`, [consumerUuid]);
    const del = await c.query('DELETE FROM allocations WHERE consumer_id = $1', [consumerUuid]);
    await deleteConsumersWithoutAllocations(c, [consumerUuid]);
    return del.rowCount ?? 0;
  });
}
