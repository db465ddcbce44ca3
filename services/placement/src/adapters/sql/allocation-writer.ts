import { isRetryableTxError, withTransaction } from '@cellsched/db';
import type { Pool, QueryResultRow } from 'pg';
import { capacityOf, checkUnits } from '../../domain/capacity';
import { badRequest, concurrentUpdate, PlacementError } from '../../domain/errors';
import type { ClaimGroup } from '../../domain/server-group';
import type { Db } from './db';
import { CLAIM_IN_GROUP_SQL, groupArgs, groupRefusalError, type GroupRefusal } from './group-claim';
import {
  deleteConsumersWithoutAllocations,
  ensureConsumerRefs,
  INCOMPLETE_CONSUMER_ID,
  insertConsumer,
  type ConsumerRow,
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

/** How the gRPC claim writes: as {@link WriteAllocationsOptions}, for a member of `group` when given. */
export interface ClaimOptions extends WriteAllocationsOptions {
  /** The server group whose policy the claim must keep (enforced policies only); absent: none checked. */
  readonly group?: ClaimGroup;
}

/** Detail of a 409 for lack of capacity, for callers that branch on it (gRPC). */
export interface CapacityFailure {
  readonly kind: 'capacity_exceeded' | 'constraints_violated' | 'no_inventory';
  readonly resourceClass: string;
  readonly providerUuid: string;
}

/** 400 of `writeAllocations` for a resource class that does not exist (handlers word it). */
export class UnknownResourceClass extends PlacementError {
  constructor(readonly resourceClass: string) {
    super(400, `No such resource class ${resourceClass}.`);
  }
}

/** A 409 of `writeAllocations` that says which class and provider ran out. */
export class AllocationConflict extends PlacementError {
  constructor(
    readonly failure: CapacityFailure,
    detail: string,
  ) {
    super(409, detail);
  }
}

interface Row {
  rpId: number;
  rpUuid: string;
  rcId: number;
  rcName: string;
  used: number;
}
interface InvRow {
  rp_id: number;
  rc_id: number;
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
  used: string | null;
}

/**
 * Atomically replace the allocations of every listed consumer (PUT /allocations/{c},
 * POST /allocations, reshaper, gRPC claim/move/release) in ONE PostgreSQL transaction:
 * locks the consumers then every touched provider (FOR UPDATE, sorted, so writers
 * serialize per provider and never deadlock among themselves), removes the consumers'
 * old allocations, checks each new amount against min_unit/max_unit/step_size and
 * `used + amount <= (total - reserved) * allocation_ratio`, inserts, bumps once the generation
 * of each provider Placement bumps (those of the new allocations, and those an emptied consumer
 * held) and each consumer's generation, and deletes consumers left
 * without allocations. All or nothing; usage can never exceed capacity.
 *
 * Errors (nothing written): 400 unknown provider or resource class; 409
 * `placement.concurrent_update` on a consumer generation mismatch (safe to re-read and
 * retry); {@link AllocationConflict} (409, `placement.undefined_code` like Placement)
 * naming the class and provider without room or inventory (retrying the same request is
 * pointless until usage changes). Idempotent: writing the same allocations twice leaves
 * the same state (generations aside).
 */
export async function writeAllocations(
  pool: Pool,
  consumers: readonly ConsumerAllocationsInput[],
  opts: WriteAllocationsOptions,
): Promise<void> {
  await withTransaction(pool, (c) => writeAllocationsIn(c, consumers, opts), { maxAttempts: opts.maxAttempts ?? 5 });
}

/** A refusal raised by the `placement_claim` function (migration 004), as JSON after this prefix. */
const CLAIM_REFUSAL = 'placement_claim:';

type ClaimRefusal =
  | GroupRefusal
  | {
      readonly kind: 'unknown_provider' | 'unknown_class' | 'generation' | 'created_concurrently' | CapacityFailure['kind'];
      /** 1-based index of the allocation row concerned. */
      readonly row?: number;
      readonly expected?: number | null;
      readonly got?: number | null;
    };

/**
 * {@link writeAllocations} for ONE consumer in one round trip: the `placement_claim` function
 * (migration 004) runs the writer's steps server-side, with the same locks, checks, error
 * precedence and writes. The gRPC Claim's path (the scheduler claims once per decision; every
 * round trip costs two process wake-ups on a loaded machine). Returns the consumer's generation
 * after the write (0 when it was left without allocations and deleted). Throws the writer's
 * errors; retries deadlocks and serialization failures like {@link writeAllocations}.
 * With `opts.group` (migration 007's `placement_claim_in_group`): the same claim under the group's
 * lock, then `GroupPolicyConflict` (group-claim.ts; nothing written) when the policy forbids it, else the
 * consumer's group is recorded.
 */
export async function claimAllocations(pool: Pool, input: ConsumerAllocationsInput, opts: ClaimOptions): Promise<number> {
  const rows = claimRows(input);
  const refs = refsOf(input);
  const maxAttempts = opts.maxAttempts ?? 5;
  const values = [
    input.consumerUuid,
    refs.project,
    refs.user,
    refs.type ?? null,
    opts.checkConsumerGeneration,
    input.consumerGeneration ?? null,
    rows.map((x) => x.providerUuid),
    rows.map((x) => x.rc),
    rows.map((x) => x.used),
  ];
  // NOTE: a claim without a group runs the very statement it ran before migration 007.
  const statement =
    opts.group === undefined
      ? {
          name: 'placement.claim',
          text: 'SELECT placement_claim($1::uuid, $2, $3, $4, $5, $6, $7::uuid[], $8::text[], $9::int[]) AS g',
          values,
        }
      : { name: 'placement.claim_in_group', text: CLAIM_IN_GROUP_SQL, values: [...groupArgs(opts.group), ...values] };
  const r = await runClaimStatement(input, () => pool.query<{ g: number }>(statement), maxAttempts);
  return r.rows[0]?.g ?? 0;
}

/**
 * Runs one statement built on `placement_claim` (the claim, the move claims): retries deadlocks and
 * serialization failures (up to `maxAttempts`), and turns its refusals into the writer's errors
 * for `input` (nothing was written then).
 */
export async function runClaimStatement<T>(input: ConsumerAllocationsInput, run: () => Promise<T>, maxAttempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      const message = (err as { message?: unknown }).message;
      if (typeof message === 'string' && message.startsWith(CLAIM_REFUSAL)) {
        throw refusalError(JSON.parse(message.slice(CLAIM_REFUSAL.length)) as ClaimRefusal, input, claimRows(input));
      }
      if (!isRetryableTxError(err) || attempt >= maxAttempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
    }
  }
}

/** One claim's allocations as `placement_claim`'s parallel arrays take them: one row per provider and class. */
export function claimRows(input: ConsumerAllocationsInput): { providerUuid: string; rc: string; used: number }[] {
  return input.allocations.flatMap((a) => Object.entries(a.resources).map(([rc, used]) => ({ providerUuid: a.providerUuid, rc, used })));
}

/** `placement_claim`'s other arguments for one claim: project, user and type as the writer resolves them. */
export function claimRefs(input: ConsumerAllocationsInput): { project: string; user: string; type: string | null } {
  const refs = refsOf(input);
  return { project: refs.project, user: refs.user, type: refs.type ?? null };
}

/** The writer's error for a refusal JSON of `placement_claim` (the text after 'placement_claim:'). */
export function claimRefusalError(refusalJson: string, input: ConsumerAllocationsInput): Error {
  return refusalError(JSON.parse(refusalJson) as ClaimRefusal, input, claimRows(input));
}

/** The writer's error for a refusal of `placement_claim` (same classes and wording). */
function refusalError(
  r: ClaimRefusal,
  input: ConsumerAllocationsInput,
  rows: readonly { providerUuid: string; rc: string; used: number }[],
): Error {
  if (r.kind === 'group_policy') return groupRefusalError(r, input.consumerUuid);
  const row = rows[(r.row ?? 1) - 1];
  switch (r.kind) {
    case 'unknown_provider':
      return badRequest(`Allocation for resource provider '${row?.providerUuid ?? '?'}' that does not exist.`);
    case 'unknown_class':
      return new UnknownResourceClass(row?.rc ?? '?');
    case 'created_concurrently':
      return concurrentUpdate(`consumer generation conflict - expected null but consumer ${input.consumerUuid} was created concurrently`);
    case 'generation':
      return concurrentUpdate(`consumer generation conflict - expected ${r.expected ?? 'null'} but got ${r.got ?? 'None'}`);
    default:
      return capacityError(r.kind, {
        consumerUuid: input.consumerUuid,
        rpId: 0,
        rpUuid: row?.providerUuid ?? '?',
        rcId: 0,
        rcName: row?.rc ?? '?',
        used: row?.used ?? 0,
      });
  }
}

/**
 * Same as {@link writeAllocations} inside a caller's transaction (reshaper, gRPC claim). Round
 * trips: prepare (1: providers, classes, consumer refs, existing consumers locked, new consumers
 * inserted), lock providers (1), check (1), write (1); one more per consumer only in rare cases
 * (a project, user or type to create, a consumer's refs to change). Returns each consumer's
 * generation after the write (consumers left without allocations are deleted and absent).
 */
export async function writeAllocationsIn(
  db: Db,
  consumers: readonly ConsumerAllocationsInput[],
  opts: WriteAllocationsOptions,
): Promise<Map<string, number>> {
  const sorted = [...consumers].sort((a, b) => (a.consumerUuid < b.consumerUuid ? -1 : 1));
  const prep = await prepare(db, sorted);
  // NOTE: consumers (their generations) are checked before the providers are looked up, as
  // Placement's ensure_consumer runs before _resource_providers_by_uuid.
  const locked: ConsumerRow[] = [];
  for (const input of sorted) locked.push(await ensureConsumer(db, input, opts, prep));
  const wanted = resolve(prep, consumers);
  const uuids = sorted.map((s) => s.consumerUuid);
  const emptied = sorted.filter((c) => c.allocations.length === 0).map((c) => c.consumerUuid);
  // Locked: every provider whose usage changes, the new ones and those of the consumers' old
  // allocations. Bumped, as Placement's _set_allocations: only the providers its allocation list
  // names, i.e. the new ones and, for a consumer emptied, those it held (a provider a consumer
  // merely moves away from keeps its generation), each once.
  // NOTE: IN (… UNION …), not `id = ANY(…) OR id IN (…)`: the OR form scans every provider.
  const rps = await named<{ id: number; bump: boolean }>(
    db,
    'placement.write.lock_providers',
    `SELECT id,
      (id = ANY($1::int[]) OR id IN (SELECT resource_provider_id FROM allocations WHERE consumer_id = ANY($3::uuid[]))) AS bump
    FROM resource_providers WHERE id IN (SELECT unnest($1::int[])
      UNION SELECT resource_provider_id FROM allocations WHERE consumer_id = ANY($2::uuid[])) ORDER BY id FOR UPDATE`,
    [[...new Set(wanted.map((w) => w.rpId))], uuids, emptied],
  );
  await checkCapacity(db, wanted, uuids);
  const bumped = rps.filter((r) => r.bump).map((r) => r.id);
  return applyWrite(
    db,
    wanted,
    uuids,
    bumped,
    locked.filter((l) => !emptied.includes(l.uuid)).map((l) => l.id),
    emptied,
  );
}

/**
 * The writes in one statement (one round trip): replace the consumers' allocations, bump
 * provider and consumer generations, delete consumers left without allocations. Returns the
 * bumped consumer generations by uuid.
 */
async function applyWrite(
  db: Db,
  wanted: readonly WantedRow[],
  consumers: string[],
  rpIds: number[],
  keptConsumerIds: number[],
  emptied: string[],
): Promise<Map<string, number>> {
  const r = await named<{ uuid: string; generation: number }>(
    db,
    'placement.write.apply',
    `WITH del AS (DELETE FROM allocations WHERE consumer_id = ANY($1::uuid[])),
      ins AS (INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
        SELECT * FROM unnest($2::int[], $3::uuid[], $4::int[], $5::int[])),
      rpg AS (UPDATE resource_providers SET generation = generation + 1, updated_at = now() WHERE id = ANY($6::int[])),
      cg AS (UPDATE consumers SET generation = generation + 1, updated_at = now() WHERE id = ANY($7::int[]) RETURNING uuid::text AS uuid, generation),
      dc AS (DELETE FROM consumers WHERE uuid = ANY($8::uuid[]))
    SELECT uuid, generation FROM cg`,
    [
      consumers,
      wanted.map((w) => w.rpId),
      wanted.map((w) => w.consumerUuid),
      wanted.map((w) => w.rcId),
      wanted.map((w) => w.used),
      rpIds,
      keptConsumerIds,
      emptied,
    ],
  );
  return new Map(r.map((x) => [x.uuid, x.generation]));
}

type WantedRow = Row & { consumerUuid: string };

/**
 * A query as a named prepared statement: each connection parses and plans it once, not on every
 * write (the claim path's statements are constant text; planning the prepare CTE costs more than
 * running it).
 */
async function named<T extends QueryResultRow>(db: Db, name: string, text: string, values: unknown[]): Promise<T[]> {
  return (await db.query<T>({ name, text, values })).rows;
}

/** The external ids a consumer is written with (Placement's incomplete ids before 1.8). */
function refsOf(input: ConsumerAllocationsInput): { project: string; user: string; type: string | undefined } {
  return {
    project: input.projectId ?? INCOMPLETE_CONSUMER_ID,
    user: input.projectId === undefined ? INCOMPLETE_CONSUMER_ID : (input.userId ?? INCOMPLETE_CONSUMER_ID),
    type: input.consumerType,
  };
}

/** What the first round trip learns (and locks, and creates). */
interface Prepared {
  readonly rps: Map<string, number>;
  readonly rcs: Map<string, number>;
  /** By lowercased consumer uuid: ids of its project, user and type (null: missing). */
  readonly refs: Map<string, { p: number | null; u: number | null; t: number | null }>;
  /** Consumers that existed, locked FOR UPDATE, by lowercased uuid. */
  readonly locked: Map<string, ConsumerRow>;
  /** Consumers this statement created (their refs all existed), by lowercased uuid. */
  readonly inserted: Map<string, ConsumerRow>;
}

const CONSUMER_COLUMNS = 'id, uuid::text AS uuid, generation, project_id, user_id, consumer_type_id';

/**
 * One statement: provider and class ids, each consumer's project/user/type ids, the existing
 * consumers locked (FOR UPDATE, in uuid order, as the writers' lock order), and the new
 * consumers whose refs exist inserted (ON CONFLICT DO NOTHING: a concurrent creator wins, the
 * caller answers a conflict). Reads only what the write needs.
 */
async function prepare(db: Db, sorted: readonly ConsumerAllocationsInput[]): Promise<Prepared> {
  const rpUuids = [...new Set(sorted.flatMap((c) => c.allocations.map((a) => a.providerUuid)))];
  const rcNames = [...new Set(sorted.flatMap((c) => c.allocations.flatMap((a) => Object.keys(a.resources))))];
  const refs = sorted.map(refsOf);
  const r = (
    await named<{
      r: {
        rps: [number, string][];
        rcs: [number, string][];
        refs: [string, number | null, number | null, number | null][];
        locked: ConsumerRow[];
        inserted: ConsumerRow[];
      };
    }>(
      db,
      'placement.write.prepare',
      `WITH
      want AS (SELECT * FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS w(uuid, project, usr, ctype, n)),
      locked AS (SELECT ${CONSUMER_COLUMNS} FROM consumers WHERE uuid = ANY($3::uuid[]) ORDER BY uuid FOR UPDATE),
      refs AS (SELECT w.uuid, w.ctype, w.n, (SELECT id FROM projects WHERE external_id = w.project) AS p,
          (SELECT id FROM users WHERE external_id = w.usr) AS u, (SELECT id FROM consumer_types WHERE name = w.ctype) AS t FROM want w),
      ins AS (INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id)
        SELECT uuid, p, u, t FROM refs WHERE p IS NOT NULL AND u IS NOT NULL AND (ctype IS NULL OR t IS NOT NULL)
          AND uuid NOT IN (SELECT uuid::uuid FROM locked) ORDER BY uuid
        ON CONFLICT (uuid) DO NOTHING RETURNING ${CONSUMER_COLUMNS})
    SELECT json_build_object(
      'rps', (SELECT coalesce(json_agg(json_build_array(id, uuid::text)), '[]') FROM resource_providers WHERE uuid = ANY($1::uuid[])),
      'rcs', (SELECT coalesce(json_agg(json_build_array(id, name)), '[]') FROM resource_classes WHERE name = ANY($2::text[])),
      'refs', (SELECT coalesce(json_agg(json_build_array(uuid::text, p, u, t) ORDER BY n), '[]') FROM refs),
      'locked', (SELECT coalesce(json_agg(locked), '[]') FROM locked),
      'inserted', (SELECT coalesce(json_agg(ins), '[]') FROM ins)) AS r`,
      [
        rpUuids,
        rcNames,
        sorted.map((c) => c.consumerUuid),
        refs.map((x) => x.project),
        refs.map((x) => x.user),
        refs.map((x) => x.type ?? null),
      ],
    )
  )[0]?.r;
  if (r === undefined) throw new Error('allocation writer: prepare returned no row');
  return {
    rps: new Map(r.rps.map(([id, uuid]) => [uuid, id])),
    rcs: new Map(r.rcs.map(([id, name]) => [name, id])),
    refs: new Map(r.refs.map(([uuid, p, u, t]) => [uuid, { p, u, t }])),
    locked: new Map(r.locked.map((c) => [c.uuid, c])),
    inserted: new Map(r.inserted.map((c) => [c.uuid, c])),
  };
}

/** The rows to insert; 400 for an unknown provider (first) or resource class, after the consumer checks. */
function resolve(prep: Prepared, consumers: readonly ConsumerAllocationsInput[]): WantedRow[] {
  const rpUuids = [...new Set(consumers.flatMap((c) => c.allocations.map((a) => a.providerUuid)))];
  const rcNames = [...new Set(consumers.flatMap((c) => c.allocations.flatMap((a) => Object.keys(a.resources))))];
  const rpId = (u: string): number | undefined => prep.rps.get(u.toLowerCase());
  const missingRp = rpUuids.find((u) => rpId(u) === undefined);
  if (missingRp !== undefined) throw badRequest(`Allocation for resource provider '${missingRp}' that does not exist.`);
  const missingRc = rcNames.find((n) => !prep.rcs.has(n));
  if (missingRc !== undefined) throw new UnknownResourceClass(missingRc);
  return consumers.flatMap((c) =>
    c.allocations.flatMap((a) =>
      Object.entries(a.resources).map(([rc, used]) => ({
        consumerUuid: c.consumerUuid,
        rpId: rpId(a.providerUuid) as number,
        rpUuid: a.providerUuid,
        rcId: prep.rcs.get(rc) as number,
        rcName: rc,
        used,
      })),
    ),
  );
}

/**
 * The consumer's row, locked: the one `prepare` locked or created, else (rare) created here
 * after creating its missing project/user/type. Checks the consumer generation when asked, and
 * moves an existing consumer to the written project/user/type.
 */
async function ensureConsumer(
  db: Db,
  input: ConsumerAllocationsInput,
  opts: WriteAllocationsOptions,
  prep: Prepared,
): Promise<ConsumerRow> {
  const key = input.consumerUuid.toLowerCase();
  const existing = prep.locked.get(key);
  const want = refsOf(input);
  const known = prep.refs.get(key);
  const complete = known !== undefined && known.p !== null && known.u !== null && (want.type === undefined || known.t !== null);
  const ids = complete
    ? { projectId: known.p as number, userId: known.u as number, typeId: want.type === undefined ? undefined : (known.t as number) }
    : await ensureConsumerRefs(db, want.project, want.user, want.type);
  if (existing === undefined) {
    if (opts.checkConsumerGeneration && input.consumerGeneration !== null && input.consumerGeneration !== undefined) {
      throw concurrentUpdate(`consumer generation conflict - expected null but got ${input.consumerGeneration}`);
    }
    const created = prep.inserted.get(key);
    if (created !== undefined) return created;
    // NOTE: refs were complete yet nothing was inserted: a concurrent creator won (as insertConsumer answers).
    if (complete) {
      throw concurrentUpdate(`consumer generation conflict - expected null but consumer ${input.consumerUuid} was created concurrently`);
    }
    return insertConsumer(db, input.consumerUuid, ids.projectId, ids.userId, ids.typeId ?? null);
  }
  if (opts.checkConsumerGeneration && existing.generation !== input.consumerGeneration) {
    throw concurrentUpdate(`consumer generation conflict - expected ${existing.generation} but got ${input.consumerGeneration ?? 'None'}`);
  }
  if (
    existing.project_id !== ids.projectId ||
    existing.user_id !== ids.userId ||
    (ids.typeId !== undefined && ids.typeId !== existing.consumer_type_id)
  ) {
    await db.query(
      'UPDATE consumers SET project_id = $2, user_id = $3, consumer_type_id = COALESCE($4, consumer_type_id), updated_at = now() WHERE id = $1',
      [existing.id, ids.projectId, ids.userId, ids.typeId ?? null],
    );
  }
  return existing;
}

/** Capacity and unit checks, counting current usage without the rewritten consumers' own allocations. */
async function checkCapacity(db: Db, wanted: readonly WantedRow[], consumers: string[]): Promise<void> {
  if (wanted.length === 0) return;
  const inv = await named<InvRow>(
    db,
    'placement.write.capacity',
    `SELECT i.resource_provider_id AS rp_id, i.resource_class_id AS rc_id, i.total, i.reserved, i.min_unit, i.max_unit,
      i.step_size, i.allocation_ratio,
      (SELECT sum(a.used) FROM allocations a WHERE a.resource_provider_id = i.resource_provider_id AND a.resource_class_id = i.resource_class_id
        AND NOT (a.consumer_id = ANY($3::uuid[]))) AS used
    FROM inventories i WHERE i.resource_provider_id = ANY($1::int[]) AND i.resource_class_id = ANY($2::int[])`,
    [[...new Set(wanted.map((w) => w.rpId))], [...new Set(wanted.map((w) => w.rcId))], consumers],
  );
  const invMap = new Map(inv.map((r) => [`${r.rp_id}:${r.rc_id}`, r]));
  noInventoryAtAll(wanted, new Set(inv.map((r) => r.rp_id)));
  const sums = new Map<string, number>();
  for (const w of wanted) {
    const key = `${w.rpId}:${w.rcId}`;
    const r = invMap.get(key);
    if (r === undefined) throw capacityError('no_inventory', w);
    const record = {
      total: r.total,
      reserved: r.reserved,
      minUnit: r.min_unit,
      maxUnit: r.max_unit,
      stepSize: r.step_size,
      allocationRatio: r.allocation_ratio,
    };
    if (checkUnits(record, w.used) !== undefined) throw capacityError('constraints_violated', w);
    const sum = (sums.get(key) ?? 0) + w.used;
    sums.set(key, sum);
    if (Number(r.used ?? 0) + sum > capacityOf(record)) throw capacityError('capacity_exceeded', w);
  }
}

/**
 * Placement's first check: a provider with no inventory of any class the write asks for
 * fails the write naming every class asked (by id, as its set of ids prints) and those providers.
 */
function noInventoryAtAll(wanted: readonly WantedRow[], withInventory: ReadonlySet<number>): void {
  const bare = [...new Set(wanted.filter((w) => !withInventory.has(w.rpId)).map((w) => w.rpUuid))];
  const first = wanted.find((w) => !withInventory.has(w.rpId));
  if (first === undefined) return;
  const classes = [...new Map(wanted.map((w) => [w.rcId, w.rcName])).entries()].sort(([a], [b]) => a - b).map(([, n]) => n);
  throw new AllocationConflict(
    { kind: 'no_inventory', resourceClass: first.rcName, providerUuid: first.rpUuid },
    `Unable to allocate inventory: Inventory for '${classes.join(', ')}' on resource provider '${bare.join(', ')}' invalid.`,
  );
}

function capacityError(kind: CapacityFailure['kind'], w: WantedRow): AllocationConflict {
  const failure = { kind, resourceClass: w.rcName, providerUuid: w.rpUuid };
  if (kind === 'no_inventory')
    return new AllocationConflict(
      failure,
      `Unable to allocate inventory: Inventory for '${w.rcName}' on resource provider '${w.rpUuid}' invalid.`,
    );
  const why =
    kind === 'capacity_exceeded'
      ? 'The requested amount would exceed the capacity.'
      : 'The requested amount would violate inventory constraints.';
  return new AllocationConflict(
    failure,
    `Unable to allocate inventory: Unable to create allocation for '${w.rcName}' on resource provider '${w.rpUuid}'. ${why}`,
  );
}

/**
 * Release everything a consumer holds (DELETE /allocations/{c}) and forget the consumer.
 * Returns how many allocation rows were removed (0: it held nothing; the caller answers
 * 404). Provider generations are left alone, as in Placement: freeing capacity cannot
 * overcommit anyone. Idempotent.
 */
export async function deleteConsumerAllocations(pool: Pool, consumerUuid: string): Promise<number> {
  return withTransaction(pool, async (c) => {
    await c.query(
      `SELECT id FROM resource_providers WHERE id IN (SELECT resource_provider_id FROM allocations WHERE consumer_id = $1)
      ORDER BY id FOR UPDATE`,
      [consumerUuid],
    );
    const del = await c.query('DELETE FROM allocations WHERE consumer_id = $1', [consumerUuid]);
    await deleteConsumersWithoutAllocations(c, [consumerUuid]);
    return del.rowCount ?? 0;
  });
}
