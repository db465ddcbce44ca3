/**
 * The move claims of the gRPC API (migration 008): ClaimMove (the source allocation to the
 * migration consumer and the destination to the instance, one transaction) and RevertMove (back,
 * one transaction). Both run placement_claim inside, so errors and capacity are the claim's.
 */
import type { Pool } from 'pg';
import { badRequest } from '../../domain/errors';
import type { ClaimGroup } from '../../domain/server-group';
import { claimRefs, claimRows, runClaimStatement, type ConsumerAllocationsInput } from './allocation-writer';

/**
 * ClaimMove: `destination` is the instance consumer with the destination's allocations (its
 * project and user are the migration consumer's too). Returns the instance consumer's generation
 * and whether this call moved the source to the migration. Throws the claim's errors (capacity,
 * group policy, unknown names); nothing is written then. Idempotent: a repeat finds the migration
 * holding the source and only re-writes the instance's destination.
 */
export async function claimMove(
  pool: Pool,
  destination: ConsumerAllocationsInput,
  migrationUuid: string,
  group?: ClaimGroup,
): Promise<{ generation: number; sourceMoved: boolean }> {
  const rows = claimRows(destination);
  if (rows.length === 0) throw badRequest('the destination allocations must not be empty');
  const refs = claimRefs(destination);
  const values = [
    destination.consumerUuid,
    migrationUuid,
    refs.project,
    refs.user,
    rows.map((r) => r.providerUuid),
    rows.map((r) => r.rc),
    rows.map((r) => r.used),
    group?.uuid ?? null,
    group?.policy ?? null,
    group?.maxServerPerHost ?? null,
  ];
  const r = await runClaimStatement(destination, () =>
    pool.query<{ generation: number; source_moved: boolean }>({
      name: 'placement.claim_move',
      text: 'SELECT generation, source_moved FROM placement_claim_move($1::uuid, $2::uuid, $3, $4, $5::uuid[], $6::text[], $7::int[], $8::uuid, $9, $10)',
      values,
    }),
  );
  return { generation: r.rows[0]?.generation ?? 0, sourceMoved: r.rows[0]?.source_moved ?? false };
}

/** RevertMove: the migration's allocations back to the instance (true), or nothing to revert (false). Idempotent. */
export async function revertMove(pool: Pool, instanceUuid: string, migrationUuid: string): Promise<boolean> {
  const input: ConsumerAllocationsInput = { consumerUuid: instanceUuid, allocations: [] };
  const r = await runClaimStatement(input, () =>
    pool.query<{ reverted: boolean }>({
      name: 'placement.revert_move',
      text: 'SELECT placement_revert_move($1::uuid, $2::uuid) AS reverted',
      values: [instanceUuid, migrationUuid],
    }),
  );
  return r.rows[0]?.reverted ?? false;
}
