import type { Flavor, RequestSpec } from '@cellsched/wire';
import type { GroupPolicy } from '../context';
import { InvalidSchedulerRequest } from '../errors';

/** One SelectDestinations call as the domain sees it. */
export interface SelectDestinationsRequest {
  readonly spec: RequestSpec;
  /** One consumer per instance, in order; the answer has one list of Selections per uuid. */
  readonly instanceUuids: readonly string[];
  /** Alternates wanted per instance: the caller's number, the only source (no max_attempts here). */
  readonly numAlternates: number;
  /** Placement microversion the opaque allocation requests are labelled with. */
  readonly allocationRequestVersion: string;
}

export const GROUP_POLICIES: readonly GroupPolicy[] = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'];

function problemsOf(req: SelectDestinationsRequest): string[] {
  const problems: string[] = [];
  if (req.spec.flavor === undefined) problems.push('request_spec.flavor is required');
  if (req.instanceUuids.length === 0) problems.push('instance_uuids must not be empty');
  if (req.instanceUuids.some((u) => u === '')) problems.push('instance_uuids must not contain an empty uuid');
  if (new Set(req.instanceUuids).size !== req.instanceUuids.length) problems.push('instance_uuids must be distinct');
  if (!Number.isInteger(req.numAlternates) || req.numAlternates < 0) problems.push(`num_alternates must be an integer >= 0, got ${req.numAlternates}`);
  const group = req.spec.instanceGroup;
  if (group !== undefined && !(GROUP_POLICIES as readonly string[]).includes(group.policy)) {
    problems.push(`instance_group.policy must be one of ${GROUP_POLICIES.join(', ')}, got "${group.policy}"`);
  }
  if (group !== undefined && group.uuid === '') problems.push('instance_group.uuid is required');
  return problems;
}

/**
 * Checks a request before anything is read or written, listing every problem at once.
 * Returns the flavor (known present). Throws InvalidSchedulerRequest (`scheduler.request.invalid`).
 */
export function validateRequest(req: SelectDestinationsRequest): Flavor {
  const problems = problemsOf(req);
  if (problems.length > 0) throw new InvalidSchedulerRequest(problems.join('; '));
  return req.spec.flavor as Flavor;
}
