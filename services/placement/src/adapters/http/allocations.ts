import { badRequest, notFound } from '../../domain/errors';
import { atLeast, type Microversion } from '../../domain/microversion';
import { canonicalUuid, isUuidLike } from '../../domain/query-params';
import * as schemas from '../../domain/schemas/allocation';
import type { JsonSchema } from '../../domain/json-schema';
import { deleteConsumerAllocations, UnknownResourceClass, writeAllocations, type ConsumerAllocationsInput } from '../sql/allocation-writer';
import { consumerAllocations, providerAllocations, type AllocationRow } from '../sql/allocations';
import { findProvider } from '../sql/resource-providers';
import { cacheHeaders, jsonBody, latest, type Handler, type PlacementRequest } from './kit';

/** Body of one consumer's allocations, normalized to the 1.12+ dict form. */
export interface ConsumerBody {
  allocations: Record<string, { resources: Record<string, number>; generation?: number }>;
  project_id?: string;
  user_id?: string;
  consumer_generation?: number | null;
  consumer_type?: string;
}

const modified = (allocs: readonly AllocationRow[]) => latest(allocs.map((a) => a.updated_at ?? a.created_at));

/** GET /allocations/{consumer_uuid} */
export const listForConsumer: Handler = async (req) => {
  const uuid = req.params.consumer_uuid ?? '';
  const allocs = isUuidLike(uuid) ? await consumerAllocations(req.pool, canonicalUuid(uuid)) : [];
  const byRp: Record<string, { generation: number; resources: Record<string, number> }> = {};
  for (const a of allocs) {
    const e = (byRp[a.rp_uuid] ??= { generation: a.rp_generation, resources: {} });
    e.resources[a.rc] = a.used;
  }
  const body: Record<string, unknown> = { allocations: byRp };
  const first = allocs[0];
  if (first && atLeast(req.version, 12)) {
    body.project_id = first.project;
    body.user_id = first.user;
    if (atLeast(req.version, 28)) body.consumer_generation = first.consumer_generation;
    if (atLeast(req.version, 38)) body.consumer_type = first.consumer_type ?? 'unknown';
  }
  return { status: 200, body, headers: cacheHeaders(req, modified(allocs)) };
};

/** GET /resource_providers/{uuid}/allocations */
export const listForProvider: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  const rp = await findProvider(req.pool, uuid);
  if (!rp) throw notFound(`Resource provider '${uuid}' not found: No resource provider with uuid ${uuid} found`);
  const allocs = await providerAllocations(req.pool, rp.id);
  const byConsumer: Record<string, { resources: Record<string, number>; consumer_generation?: number | null }> = {};
  for (const a of allocs) {
    const e = (byConsumer[a.consumer_uuid] ??= { resources: {} });
    e.resources[a.rc] = a.used;
    if (atLeast(req.version, 28)) e.consumer_generation = a.consumer_generation;
  }
  return {
    status: 200,
    body: { allocations: byConsumer, resource_provider_generation: rp.generation },
    headers: cacheHeaders(req, modified(allocs)),
  };
};

function putSchema(v: Microversion): JsonSchema {
  if (atLeast(v, 38)) return schemas.ALLOCATION_1_38;
  if (atLeast(v, 34)) return schemas.ALLOCATION_1_34;
  if (atLeast(v, 28)) return schemas.ALLOCATION_1_28;
  if (atLeast(v, 12)) return schemas.ALLOCATION_1_12;
  if (atLeast(v, 8)) return schemas.ALLOCATION_1_8;
  return schemas.ALLOCATION_1_0;
}

/** A consumer body (any microversion's shape) → writer input. */
export function toInput(consumerUuid: string, body: ConsumerBody, v: Microversion): ConsumerAllocationsInput {
  return {
    consumerUuid,
    projectId: body.project_id,
    userId: body.user_id,
    consumerGeneration: body.consumer_generation,
    consumerType: atLeast(v, 38) ? body.consumer_type : undefined,
    allocations: Object.entries(body.allocations).map(([rp, a]) => ({ providerUuid: canonicalUuid(rp), resources: a.resources })),
  };
}

function parsePutBody(req: PlacementRequest): ConsumerBody {
  const raw = jsonBody<Record<string, unknown>>(req, putSchema(req.version));
  if (atLeast(req.version, 12)) return raw as unknown as ConsumerBody;
  const list = raw.allocations as Array<{ resource_provider: { uuid: string }; resources: Record<string, number> }>;
  const dict: ConsumerBody['allocations'] = {};
  for (const a of list) dict[a.resource_provider.uuid] = { resources: a.resources };
  return { ...(raw as object), allocations: dict };
}

/** PUT /allocations/{consumer_uuid}: replace the consumer's allocations (one transaction). */
export const put: Handler = async (req) => {
  const raw = req.params.consumer_uuid ?? '';
  if (!isUuidLike(raw)) throw badRequest(`Malformed consumer_uuid: ${raw}`);
  const body = parsePutBody(req);
  const consumer = canonicalUuid(raw);
  try {
    await writeAllocations(req.pool, [toInput(consumer, body, req.version)], { checkConsumerGeneration: atLeast(req.version, 28) });
  } catch (e) {
    if (e instanceof UnknownResourceClass) throw badRequest(`Unable to allocate inventory for consumer ${consumer}: ${e.detail}`);
    throw e;
  }
  return { status: 204 };
};

function postSchema(v: Microversion): JsonSchema {
  if (atLeast(v, 38)) return schemas.POST_ALLOCATIONS_1_38;
  if (atLeast(v, 34)) return schemas.POST_ALLOCATIONS_1_34;
  if (atLeast(v, 28)) return schemas.POST_ALLOCATIONS_1_28;
  return schemas.POST_ALLOCATIONS_1_13;
}

/** POST /allocations (1.13+): several consumers atomically (how moves swap allocations). */
export const post: Handler = async (req) => {
  const data = jsonBody<Record<string, ConsumerBody>>(req, postSchema(req.version));
  const inputs = Object.entries(data).map(([c, b]) => toInput(canonicalUuid(c), b, req.version));
  try {
    await writeAllocations(req.pool, inputs, { checkConsumerGeneration: atLeast(req.version, 28) });
  } catch (e) {
    if (e instanceof UnknownResourceClass) throw badRequest(`Unable to allocate inventory ${e.detail}`);
    throw e;
  }
  return { status: 204 };
};

/**
 * DELETE /allocations/{consumer_uuid}: 404 when the consumer holds nothing. Like Placement,
 * provider generations are not bumped: freeing capacity cannot overcommit anyone.
 */
export const remove: Handler = async (req) => {
  const raw = req.params.consumer_uuid ?? '';
  const uuid = isUuidLike(raw) ? canonicalUuid(raw) : undefined;
  const deleted = uuid === undefined ? 0 : await deleteConsumerAllocations(req.pool, uuid);
  if (deleted === 0) throw notFound(`No allocations for consumer '${raw}'`);
  return { status: 204 };
};
