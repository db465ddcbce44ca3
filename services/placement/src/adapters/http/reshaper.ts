import { withTransaction } from '@cellsched/db';
import type { InventoryRecord } from '../../domain/capacity';
import { badRequest, concurrentUpdate, ErrorCode } from '../../domain/errors';
import type { JsonSchema } from '../../domain/json-schema';
import { atLeast } from '../../domain/microversion';
import { canonicalUuid } from '../../domain/query-params';
import * as allocSchemas from '../../domain/schemas/allocation';
import { UUID_PATTERN } from '../../domain/schemas/common';
import { PUT_INVENTORY } from '../../domain/schemas/inventory';
import { writeAllocationsIn } from '../sql/allocation-writer';
import { providerInventories, setInventories } from '../sql/inventories';
import { findProvider, lockProvider } from '../sql/resource-providers';
import { toInput, type ConsumerBody } from './allocations';
import { toRecord } from './inventories';
import { jsonBody, type Handler, type PlacementRequest } from './kit';

function schemaFor(req: PlacementRequest): JsonSchema {
  const v = req.version;
  const allocations = allocSchemas.reshaperAllocations(
    atLeast(v, 38)
      ? allocSchemas.POST_ALLOCATIONS_1_38
      : atLeast(v, 34)
        ? allocSchemas.POST_ALLOCATIONS_1_34
        : allocSchemas.POST_ALLOCATIONS_1_28,
  );
  return {
    type: 'object',
    properties: {
      inventories: { type: 'object', patternProperties: { [UUID_PATTERN]: PUT_INVENTORY }, minProperties: 1, additionalProperties: false },
      allocations,
    },
    required: ['inventories', 'allocations'],
    additionalProperties: false,
  };
}

interface ReshapeBody {
  inventories: Record<string, { resource_provider_generation: number; inventories: Record<string, Parameters<typeof toRecord>[0]> }>;
  allocations: Record<string, ConsumerBody>;
}

/**
 * POST /reshaper (1.30+): move inventory and allocations between providers of a tree in
 * ONE transaction: interim inventories (old ∪ new), then the consumers' allocations via
 * the allocation writer, then the final inventories (classes no longer listed deleted).
 */
export const reshape: Handler = async (req) => {
  const body = jsonBody<ReshapeBody>(req, schemaFor(req));
  const invs = new Map(Object.entries(body.inventories).map(([u, d]) => [canonicalUuid(u), d]));
  for (const [uuid, data] of invs) {
    const rp = await findProvider(req.pool, uuid);
    if (!rp)
      throw badRequest(
        `Resource provider ${uuid} in inventories not found: No resource provider with uuid ${uuid} found`,
        ErrorCode.RESOURCE_PROVIDER_NOT_FOUND,
      );
    if (rp.generation !== data.resource_provider_generation) {
      throw concurrentUpdate(
        `resource provider generation conflict for provider ${uuid}: actual: ${rp.generation}, given: ${data.resource_provider_generation}`,
      );
    }
  }
  const consumers = Object.entries(body.allocations).map(([c, b]) => toInput(canonicalUuid(c), b, req.version));
  await withTransaction(req.pool, async (c) => {
    const finals = new Map<string, Map<string, InventoryRecord>>();
    for (const [uuid, data] of [...invs].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const rp = await lockProvider(c, uuid);
      if (rp.generation !== data.resource_provider_generation)
        throw concurrentUpdate(`resource provider generation conflict for provider ${uuid}`);
      const final = new Map(Object.entries(data.inventories).map(([rc, b]) => [rc, toRecord(b)]));
      finals.set(uuid, final);
      if (final.size === 0) continue;
      const interim = new Map<string, InventoryRecord>(await providerInventories(c, rp.id));
      for (const [rc, inv] of final) interim.set(rc, inv);
      await setInventories(c, rp, interim);
    }
    await writeAllocationsIn(c, consumers, { checkConsumerGeneration: true });
    for (const [uuid, final] of finals) await setInventories(c, await lockProvider(c, uuid), final);
  });
  return { status: 204 };
};
