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
  /** Set for a move of one existing instance (migrate, resize, live migration, evacuate). */
  readonly move?: MoveContext | undefined;
}

/**
 * A move as the domain sees it (wire MoveContext): the chosen host is claimed with a move claim
 * (the source allocation goes to the migration consumer in the same write), the source host is
 * excluded unless `allowSameHost`.
 */
export interface MoveContext {
  /** The migration record's uuid, also its placement consumer. */
  readonly migrationUuid: string;
  readonly sourceHost: string;
  readonly sourceNode: string;
  /** Nova's allow_resize_to_same_host (resize only). */
  readonly allowSameHost: boolean;
  /**
   * A forced destination (evacuate / live migration with `force`): the requested host is claimed
   * directly, no filter or weigher runs and no alternate is returned; placement still checks capacity.
   */
  readonly force?: boolean;
}

export const GROUP_POLICIES: readonly GroupPolicy[] = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'];

function moveProblems(req: SelectDestinationsRequest, move: MoveContext): string[] {
  const problems: string[] = [];
  if (req.instanceUuids.length !== 1) problems.push(`a move schedules exactly one instance, got ${req.instanceUuids.length}`);
  if (move.migrationUuid === '') problems.push('move.migration_uuid is required');
  if (move.migrationUuid !== '' && req.instanceUuids.includes(move.migrationUuid))
    problems.push('move.migration_uuid must not be the instance uuid');
  if (move.sourceHost === '') problems.push('move.source_host is required');
  if (move.force === true && (req.spec.requestedDestination?.host ?? '') === '')
    problems.push('a forced move needs request_spec.requested_destination.host');
  return problems;
}

function problemsOf(req: SelectDestinationsRequest): string[] {
  const problems: string[] = [];
  if (req.spec.flavor === undefined) problems.push('request_spec.flavor is required');
  if (req.instanceUuids.length === 0) problems.push('instance_uuids must not be empty');
  if (req.instanceUuids.some((u) => u === '')) problems.push('instance_uuids must not contain an empty uuid');
  if (new Set(req.instanceUuids).size !== req.instanceUuids.length) problems.push('instance_uuids must be distinct');
  if (!Number.isInteger(req.numAlternates) || req.numAlternates < 0)
    problems.push(`num_alternates must be an integer >= 0, got ${req.numAlternates}`);
  const group = req.spec.instanceGroup;
  if (group !== undefined && !(GROUP_POLICIES as readonly string[]).includes(group.policy)) {
    problems.push(`instance_group.policy must be one of ${GROUP_POLICIES.join(', ')}, got "${group.policy}"`);
  }
  if (group !== undefined && group.uuid === '') problems.push('instance_group.uuid is required');
  if (req.move !== undefined) problems.push(...moveProblems(req, req.move));
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
