import { FAILURE_CODES, type ConsumerAllocations, type ProviderAllocation } from '@cellsched/wire';

/** A malformed opaque allocation request (a Selection that did not come from the scheduler). */
export class AllocationRequestError extends Error {
  readonly code = FAILURE_CODES.placementClient.allocationRequestInvalid;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function providerAllocation(rp: string, body: unknown): ProviderAllocation {
  const resources = isObj(body) ? body.resources : undefined;
  if (!isObj(resources)) throw new AllocationRequestError(`allocation request: provider ${rp} has no "resources" object`);
  const out: Record<string, number> = {};
  for (const [rc, amount] of Object.entries(resources)) {
    if (!Number.isSafeInteger(amount) || (amount as number) < 1)
      throw new AllocationRequestError(`allocation request: ${rc} on ${rp} must be a positive integer`);
    out[rc] = amount as number;
  }
  return { resourceProviderUuid: rp, resources: out };
}

/**
 * Parses the opaque allocation request JSON a Selection carries
 * (`{"allocations": {rp_uuid: {"resources": {...}}}, "mappings": {...}}`, Placement's
 * allocation-candidates shape) into per-provider allocations. Pure. Throws
 * {@link AllocationRequestError} for anything else.
 */
export function parseAllocationRequest(json: string): ProviderAllocation[] {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw new AllocationRequestError('allocation request is not JSON');
  }
  if (!isObj(data) || !isObj(data.allocations)) throw new AllocationRequestError('allocation request has no "allocations" object');
  const list = Object.entries(data.allocations).map(([rp, body]) => providerAllocation(rp, body));
  if (list.length === 0) throw new AllocationRequestError('allocation request allocates nothing');
  return list;
}

/** The consumer an instance claim writes (consumer type INSTANCE, no generation: used with replace). Pure. */
export function instanceConsumer(
  instance: { uuid: string; projectId: string; userId: string },
  allocations: readonly ProviderAllocation[],
): ConsumerAllocations {
  return {
    consumerUuid: instance.uuid,
    projectId: instance.projectId,
    userId: instance.userId,
    consumerType: 'INSTANCE',
    allocations: allocations.map((a) => ({ resourceProviderUuid: a.resourceProviderUuid, resources: { ...a.resources } })),
  };
}
