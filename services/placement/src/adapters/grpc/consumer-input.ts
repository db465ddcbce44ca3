/**
 * Validation of gRPC ConsumerAllocations into the allocation writer's input, with the
 * rules of PUT /allocations/{consumer} (uuids, amounts >= 1, consumer type pattern), and of a
 * claim's server group.
 */
import type { ConsumerAllocations, ConsumerGroup } from '@cellsched/wire';
import { canonicalUuid, isUuidLike } from '../../domain/query-params';
import { enforcedGroup, groupProblems, type ClaimGroup } from '../../domain/server-group';
import type { ConsumerAllocationsInput } from '../sql/allocation-writer';
import { invalid } from './failures';

const CONSUMER_TYPE = /^[A-Z0-9_]+$/;

function uuidField(value: string, what: string): string {
  if (!isUuidLike(value)) throw invalid(`${what} must be a uuid, got '${value}'`);
  return canonicalUuid(value);
}

/** Checks one consumer's allocations; throws INVALID_ARGUMENT (nothing written). */
export function toConsumerInput(c: ConsumerAllocations | undefined): ConsumerAllocationsInput {
  if (!c) throw invalid('consumer is required');
  const consumerUuid = uuidField(c.consumerUuid, 'consumer_uuid');
  if (c.projectId === '' || c.userId === '') throw invalid('project_id and user_id are required');
  if (c.consumerType !== '' && !CONSUMER_TYPE.test(c.consumerType))
    throw invalid(`consumer_type '${c.consumerType}' does not match ^[A-Z0-9_]+$`);
  const allocations = c.allocations.map((a) => {
    const providerUuid = uuidField(a.resourceProviderUuid, 'resource_provider_uuid');
    const entries = Object.entries(a.resources);
    if (entries.length === 0) throw invalid(`allocation against ${providerUuid} names no resources`);
    for (const [rc, n] of entries) {
      if (!Number.isSafeInteger(n) || n < 1) throw invalid(`amount of ${rc} on ${providerUuid} must be an integer >= 1, got ${n}`);
    }
    return { providerUuid, resources: a.resources };
  });
  return {
    consumerUuid,
    projectId: c.projectId,
    userId: c.userId,
    consumerGeneration: c.consumerGeneration ?? null,
    ...(c.consumerType === '' ? {} : { consumerType: c.consumerType }),
    allocations,
  };
}

/**
 * Checks a claim's server group; throws INVALID_ARGUMENT (nothing written). Returns the group whose
 * policy the claim must keep, or undefined when there is none or its policy is not enforced (soft-*).
 */
export function toClaimGroup(g: ConsumerGroup | undefined): ClaimGroup | undefined {
  if (g === undefined) return undefined;
  const uuid = uuidField(g.uuid, 'group.uuid');
  const input = { uuid, policy: g.policy, maxServerPerHost: g.maxServerPerHost };
  const problems = groupProblems(input);
  if (problems.length > 0) throw invalid(problems.join('; '));
  return enforcedGroup(input);
}
