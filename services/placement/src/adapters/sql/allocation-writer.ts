import { isRetryableTxError, withTransaction } from '@cellsched/db';
import type { Pool } from 'pg';
import { badRequest, concurrentUpdate, PlacementError } from '../../domain/errors';
import type { ClaimGroup } from '../../domain/server-group';
import type { Db } from './db';
import { CLAIM_IN_GROUP_SQL, groupArgs, groupRefusalError, type GroupRefusal } from './group-claim';
import { deleteConsumersWithoutAllocations, INCOMPLETE_CONSUMER_ID } from './consumers';

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

/**
 * Atomically replace the allocations of every listed consumer (PUT /allocations/{c},
 * POST /allocations, gRPC move and release) in ONE statement: `placement_write()` of migration
 * 009, THE capacity and write rule (its header lists the steps: consumers locked in uuid order
 * and their generations checked, unknown names refused, every provider whose usage changes
 * locked in id order, each new amount checked against min_unit/max_unit/step_size and
 * `used + amount <= (total - reserved) * allocation_ratio`, the write, the generation bumps
 * Placement makes, emptied consumers deleted). All or nothing; usage can never exceed capacity.
 * Returns the generation of each consumer left holding allocations (emptied ones are deleted
 * and absent).
 *
 * Errors (nothing written): 400 unknown provider or resource class; 409
 * `placement.concurrent_update` on a consumer generation mismatch (safe to re-read and
 * retry); {@link AllocationConflict} (409, `placement.undefined_code` like Placement)
 * naming the class and provider without room or inventory (retrying the same request is
 * pointless until usage changes). Deadlocks and serialization failures are retried (the
 * statement wrote nothing). Idempotent: writing the same allocations twice leaves the same
 * state (generations aside).
 */
export async function writeAllocations(
  pool: Pool,
  consumers: readonly ConsumerAllocationsInput[],
  opts: WriteAllocationsOptions,
): Promise<Map<string, number>> {
  return retrying(() => writeAllocationsIn(pool, consumers, opts), opts.maxAttempts ?? 5);
}

/**
 * Same as {@link writeAllocations} on `db`, which may be a client inside a caller's transaction
 * (reshaper, gRPC release): one statement, not retried (the caller's transaction is).
 */
export async function writeAllocationsIn(
  db: Db,
  consumers: readonly ConsumerAllocationsInput[],
  opts: WriteAllocationsOptions,
): Promise<Map<string, number>> {
  const rows = consumers.flatMap((c, k) => claimRows(c).map((r) => ({ ...r, consumer: k + 1 })));
  const refs = consumers.map(claimRefs);
  const r = await refusing(consumers, () =>
    db.query<{ g: number[] }>({
      name: 'placement.write',
      text: 'SELECT placement_write($1::uuid[], $2::text[], $3::text[], $4::text[], $5, $6::int[], $7::int[], $8::uuid[], $9::text[], $10::int[]) AS g',
      values: [
        consumers.map((c) => c.consumerUuid),
        refs.map((x) => x.project),
        refs.map((x) => x.user),
        refs.map((x) => x.type),
        opts.checkConsumerGeneration,
        consumers.map((c) => c.consumerGeneration ?? null),
        rows.map((x) => x.consumer),
        rows.map((x) => x.providerUuid),
        rows.map((x) => x.rc),
        rows.map((x) => x.used),
      ],
    }),
  );
  const generations = r.rows[0]?.g ?? [];
  return new Map(consumers.flatMap((c, k) => ((generations[k] ?? 0) > 0 ? [[c.consumerUuid, generations[k] as number] as const] : [])));
}

/** Placement's 409 for a refused amount, naming the class and provider (the 'failure' carries them as data). */
function capacityError(kind: CapacityFailure['kind'], rcName: string, rpUuid: string): AllocationConflict {
  const failure = { kind, resourceClass: rcName, providerUuid: rpUuid };
  if (kind === 'no_inventory')
    return new AllocationConflict(
      failure,
      `Unable to allocate inventory: Inventory for '${rcName}' on resource provider '${rpUuid}' invalid.`,
    );
  const why =
    kind === 'capacity_exceeded'
      ? 'The requested amount would exceed the capacity.'
      : 'The requested amount would violate inventory constraints.';
  return new AllocationConflict(
    failure,
    `Unable to allocate inventory: Unable to create allocation for '${rcName}' on resource provider '${rpUuid}'. ${why}`,
  );
}

/** A refusal raised by `placement_write` (migration 009), as JSON after this prefix. */
const CLAIM_REFUSAL = 'placement_claim:';

type ClaimRefusal =
  | GroupRefusal
  | {
      readonly kind: 'unknown_provider' | 'unknown_class' | 'generation' | 'created_concurrently' | CapacityFailure['kind'];
      /** 1-based index of the allocation row concerned, over all the write's consumers in order. */
      readonly row?: number;
      /** 1-based index of the consumer concerned. */
      readonly consumer?: number;
      readonly expected?: number | null;
      readonly got?: number | null;
      /** no_inventory of providers without inventory of any class the write names: each one's first row, and the classes. */
      readonly rows?: readonly number[];
      readonly classes?: readonly string[];
    };

/**
 * {@link writeAllocations} for ONE consumer, through `placement_claim` (migration 009: `placement_write`
 * for one consumer), the gRPC Claim's statement. Returns the consumer's generation after the
 * write (0 when it was left without allocations and deleted). Throws the writer's errors;
 * retries deadlocks and serialization failures like {@link writeAllocations}.
 * With `opts.group` (migration 007's `placement_claim_in_group`): the same claim under the group's
 * lock, then `GroupPolicyConflict` (group-claim.ts; nothing written) when the policy forbids it, else the
 * consumer's group is recorded.
 */
export async function claimAllocations(pool: Pool, input: ConsumerAllocationsInput, opts: ClaimOptions): Promise<number> {
  const rows = claimRows(input);
  const refs = claimRefs(input);
  const values = [
    input.consumerUuid,
    refs.project,
    refs.user,
    refs.type,
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
  const r = await runClaimStatement(input, () => pool.query<{ g: number }>(statement), opts.maxAttempts ?? 5);
  return r.rows[0]?.g ?? 0;
}

/**
 * Runs one statement built on `placement_write` for `input` (the claim, the move claims): retries
 * deadlocks and serialization failures (up to `maxAttempts`), and turns its refusals into the
 * writer's errors (nothing was written then).
 */
export async function runClaimStatement<T>(input: ConsumerAllocationsInput, run: () => Promise<T>, maxAttempts = 5): Promise<T> {
  return retrying(() => refusing([input], run), maxAttempts);
}

/** `run` again after a deadlock or serialization failure (the aborted statement wrote nothing), up to `maxAttempts` times. */
async function retrying<T>(run: () => Promise<T>, maxAttempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isRetryableTxError(err) || attempt >= maxAttempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
    }
  }
}

/** `run`, with a refusal of `placement_write` turned into the writer's error for `consumers`. */
async function refusing<T>(consumers: readonly ConsumerAllocationsInput[], run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && message.startsWith(CLAIM_REFUSAL)) {
      throw refusalError(JSON.parse(message.slice(CLAIM_REFUSAL.length)) as ClaimRefusal, consumers);
    }
    throw err;
  }
}

/** One claim's allocations as `placement_write`'s parallel arrays take them: one row per provider and class. */
export function claimRows(input: ConsumerAllocationsInput): { providerUuid: string; rc: string; used: number }[] {
  return input.allocations.flatMap((a) => Object.entries(a.resources).map(([rc, used]) => ({ providerUuid: a.providerUuid, rc, used })));
}

/** The project, user and type a consumer is written with (Placement's incomplete ids before 1.8; null type: leave it). */
export function claimRefs(input: ConsumerAllocationsInput): { project: string; user: string; type: string | null } {
  return {
    project: input.projectId ?? INCOMPLETE_CONSUMER_ID,
    user: input.projectId === undefined ? INCOMPLETE_CONSUMER_ID : (input.userId ?? INCOMPLETE_CONSUMER_ID),
    type: input.consumerType ?? null,
  };
}

/** The writer's error for a refusal JSON of `placement_claim` (the text after 'placement_claim:'). */
export function claimRefusalError(refusalJson: string, input: ConsumerAllocationsInput): Error {
  return refusalError(JSON.parse(refusalJson) as ClaimRefusal, [input]);
}

/** The writer's error for a refusal of `placement_write`, worded as Placement words it. */
function refusalError(r: ClaimRefusal, consumers: readonly ConsumerAllocationsInput[]): Error {
  if (r.kind === 'group_policy') return groupRefusalError(r, consumers[0]?.consumerUuid ?? '?');
  const rows = consumers.flatMap(claimRows);
  const row = rows[(r.row ?? 1) - 1];
  const consumer = consumers[(r.consumer ?? 1) - 1]?.consumerUuid ?? '?';
  switch (r.kind) {
    case 'unknown_provider':
      return badRequest(`Allocation for resource provider '${row?.providerUuid ?? '?'}' that does not exist.`);
    case 'unknown_class':
      return new UnknownResourceClass(row?.rc ?? '?');
    case 'created_concurrently':
      return concurrentUpdate(`consumer generation conflict - expected null but consumer ${consumer} was created concurrently`);
    case 'generation':
      return concurrentUpdate(`consumer generation conflict - expected ${r.expected ?? 'null'} but got ${r.got ?? 'None'}`);
    case 'no_inventory':
      if (r.rows !== undefined && r.classes !== undefined) {
        // Placement's first check: providers with no inventory of any class the write names, all named
        const bare = r.rows.map((i) => rows[i - 1]?.providerUuid ?? '?');
        return new AllocationConflict(
          { kind: 'no_inventory', resourceClass: row?.rc ?? '?', providerUuid: row?.providerUuid ?? '?' },
          `Unable to allocate inventory: Inventory for '${r.classes.join(', ')}' on resource provider '${bare.join(', ')}' invalid.`,
        );
      }
      return capacityError('no_inventory', row?.rc ?? '?', row?.providerUuid ?? '?');
    default:
      return capacityError(r.kind, row?.rc ?? '?', row?.providerUuid ?? '?');
  }
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
