/**
 * The gRPC PlacementService over the same core as the REST API: candidates from the
 * cached snapshot search, claims/moves/releases through the one allocation writer (one
 * PostgreSQL transaction each, capacity checked, generations bumped); claims that arrive
 * together share one statement and one commit (group commit, each still all-or-nothing).
 */
import { withTransaction } from '@cellsched/db';
import { bindService, failureForError, type ServiceBinding, type ServiceHandlers } from '@cellsched/grpc';
import {
  PlacementServiceService,
  type ClaimRequest,
  type ClaimResult,
  type ConsumerAllocations,
  type GetUsagesRequest,
} from '@cellsched/wire';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import { parseCandidateQuery } from '../../domain/candidates/query-parser';
import { canonicalUuid, isUuidLike } from '../../domain/query-params';
import { consumerAllocations, providerUsages, totalUsages } from '../sql/allocations';
import { writeAllocations, writeAllocationsIn, type ClaimOptions } from '../sql/allocation-writer';
import { ClaimBatcher } from '../sql/claim-batcher';
import { claimMove, revertMove } from '../sql/move-claims';
import { queryAllocationCandidates } from '../sql/candidates-query';
import { CandidateSnapshotCache } from '../sql/candidates-snapshot';
import { rows } from '../sql/db';
import { findProvider } from '../sql/resource-providers';
import { GRPC_CANDIDATES_MINOR, ProviderSummaries, requestToQuery, resultToResponse } from './candidates-mapping';
import { toClaimGroup, toConsumerInput } from './consumer-input';
import { invalid, withFailures } from './failures';

type Handlers = ServiceHandlers<typeof PlacementServiceService>;

async function usages(pool: Pool, req: GetUsagesRequest): Promise<Record<string, number>> {
  if (req.resourceProviderUuid !== '') {
    const rp = await findProvider(pool, req.resourceProviderUuid);
    if (!rp) throw invalid(`No resource provider with uuid ${req.resourceProviderUuid} found`);
    return providerUsages(pool, rp.id);
  }
  if (req.projectId === '') throw invalid('either resource_provider_uuid or project_id is required');
  const base = { projectId: req.projectId, ...(req.userId === '' ? {} : { userId: req.userId }) };
  if (req.consumerType === '') return (await totalUsages(pool, { ...base, byType: false })) as Record<string, number>;
  const byType = (await totalUsages(pool, { ...base, consumerType: req.consumerType, byType: true })) as Record<
    string,
    Record<string, number>
  >;
  const { consumer_count: _count, ...amounts } = byType[req.consumerType] ?? {};
  return amounts;
}

async function consumerOf(pool: Pool, uuid: string): Promise<ConsumerAllocations | undefined> {
  const list = await consumerAllocations(pool, uuid);
  const first = list[0];
  if (!first) return undefined;
  const byRp = new Map<string, Record<string, number>>();
  for (const r of list) byRp.set(r.rp_uuid, { ...(byRp.get(r.rp_uuid) ?? {}), [r.rc]: r.used });
  return {
    consumerUuid: uuid,
    projectId: first.project ?? '',
    userId: first.user ?? '',
    consumerType: first.consumer_type ?? '',
    consumerGeneration: first.consumer_generation ?? 0,
    allocations: [...byRp].map(([resourceProviderUuid, resources]) => ({ resourceProviderUuid, resources })),
  };
}

function uuids(values: readonly string[]): string[] {
  return values.map((v) => {
    if (!isUuidLike(v)) throw invalid(`consumer uuid expected, got '${v}'`);
    return canonicalUuid(v);
  });
}

/** How a ClaimRequest writes: replace or not, and for a member of which group (INVALID_ARGUMENT for a bad group). */
function claimOptions(req: ClaimRequest): ClaimOptions {
  const group = toClaimGroup(req.group);
  return { checkConsumerGeneration: !req.replace, ...(group === undefined ? {} : { group }) };
}

/** One claim, through the batcher: its consumer's generation, or the Failure Claim would answer. */
async function claimOne(claims: ClaimBatcher, req: ClaimRequest, logger: Logger): Promise<ClaimResult> {
  try {
    const generation = await withFailures(() => claims.claim(toConsumerInput(req.consumer), claimOptions(req)));
    return { consumerGeneration: generation, failure: undefined };
  } catch (err) {
    return { consumerGeneration: 0, failure: failureForError(err, logger).failure };
  }
}

/** Handlers of every PlacementService method, over `pool` and its candidate `snapshots`. */
export function placementHandlers(pool: Pool, snapshots: CandidateSnapshotCache, claims: ClaimBatcher = new ClaimBatcher(pool)): Handlers {
  const summaries = new ProviderSummaries();
  return {
    getAllocationCandidates: (req) =>
      withFailures(async () => {
        const { groups, params } = parseCandidateQuery(requestToQuery(req), GRPC_CANDIDATES_MINOR);
        const { snapshot, result } = await queryAllocationCandidates(snapshots, groups, params, req.seed === 0 ? {} : { seed: req.seed });
        // NOTE: claims that arrived during the search go before the rendering and encoding of up to 1,000 candidates.
        await yieldToIo();
        return resultToResponse(snapshot, result, summaries);
      }),
    claim: (req) =>
      withFailures(async () => {
        const input = toConsumerInput(req.consumer);
        // NOTE: group commit: claims arriving while a batch runs go together in the next one (claim-batcher.ts).
        const generation = await claims.claim(input, claimOptions(req));
        return { consumerGeneration: generation };
      }),
    // NOTE: every claim is queued at once, so they share the batcher's next statement (group commit);
    // each is answered on its own, as Claim would answer it.
    claimMany: async (req, ctx) => ({ results: await Promise.all(req.claims.map((c) => claimOne(claims, c, ctx.logger))) }),
    move: (req) =>
      withFailures(async () => {
        if (req.consumers.length === 0) throw invalid('consumers must not be empty');
        await writeAllocations(pool, req.consumers.map(toConsumerInput), { checkConsumerGeneration: true });
        return {};
      }),
    claimMove: (req) =>
      withFailures(async () => {
        const destination = toConsumerInput(req.destination);
        if (destination.allocations.length === 0) throw invalid('destination allocations must not be empty');
        const migration = uuids([req.migrationUuid])[0] as string;
        if (migration === destination.consumerUuid) throw invalid('migration_uuid must differ from the instance consumer');
        const { generation, sourceMoved } = await claimMove(pool, destination, migration, toClaimGroup(req.group));
        return { consumerGeneration: generation, sourceMoved };
      }),
    revertMove: (req) =>
      withFailures(async () => {
        const [instance, migration] = uuids([req.instanceUuid, req.migrationUuid]) as [string, string];
        if (instance === migration) throw invalid('migration_uuid must differ from instance_uuid');
        return { reverted: await revertMove(pool, instance, migration) };
      }),
    release: (req) =>
      withFailures(async () => {
        const wanted = uuids(req.consumerUuids);
        const released = await withTransaction(pool, async (db) => {
          const held = await rows<{ c: string }>(
            db,
            'SELECT DISTINCT consumer_id::text AS c FROM allocations WHERE consumer_id = ANY($1::uuid[])',
            [wanted],
          );
          const list = held.map((h) => h.c);
          if (list.length > 0)
            await writeAllocationsIn(
              db,
              list.map((consumerUuid) => ({ consumerUuid, allocations: [] })),
              { checkConsumerGeneration: false },
            );
          return list;
        });
        return { released };
      }),
    getUsages: (req) => withFailures(async () => ({ usages: await usages(pool, req) })),
    getConsumerAllocations: (req) =>
      withFailures(async () => {
        const [uuid] = uuids([req.consumerUuid]);
        const consumer = await consumerOf(pool, uuid as string);
        return consumer ? { consumer, exists: true } : { consumer: undefined, exists: false };
      }),
    listProviderConsumers: (req) =>
      withFailures(async () => {
        const wanted = uuids(req.providerUuids);
        if (wanted.length > MAX_LISTED_PROVIDERS) throw invalid(`at most ${MAX_LISTED_PROVIDERS} providers per call, got ${wanted.length}`);
        const found = await rows<{ p: string; c: string[] }>(
          pool,
          `SELECT rp.uuid::text AS p, coalesce(array_agg(DISTINCT a.consumer_id::text ORDER BY a.consumer_id::text) FILTER (WHERE a.consumer_id IS NOT NULL), '{}') AS c
         FROM resource_providers rp LEFT JOIN allocations a ON a.resource_provider_id = rp.id
         WHERE rp.uuid = ANY($1::uuid[]) GROUP BY rp.uuid`,
          [wanted],
        );
        const byUuid = new Map(found.map((f) => [f.p, f.c]));
        return { providers: wanted.flatMap((p) => (byUuid.has(p) ? [{ providerUuid: p, consumerUuids: byUuid.get(p) ?? [] }] : [])) };
      }),
  };
}

/** Providers one ListProviderConsumers call may ask about. */
export const MAX_LISTED_PROVIDERS = 10_000;

/**
 * The service binding to pass to `startGrpcServer`. Give it the `snapshots` the REST app reads
 * too (main does), so the two services share one cached snapshot of the database.
 */
export function placementServiceBinding(pool: Pool, snapshots: CandidateSnapshotCache = new CandidateSnapshotCache(pool)): ServiceBinding {
  return bindService(PlacementServiceService, placementHandlers(pool, snapshots));
}
