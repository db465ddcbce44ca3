import { getInstanceMappingsWithBuildRequests, type BuildRequest } from '@cellsched/api-db';
import type { CastContext } from '@cellsched/bus';
import type { Instance, RequestSpec, ScheduleAndBuildInstancesRequest } from '@cellsched/wire';
import type { Logger } from 'pino';
import { mayBeInACell, noValidHostFault, planBuild, type BuildPlan, type MappingState } from '../domain/build-plan';
import type { DestinationSelector } from '../ports';
import type { BuildDeps } from './build-deps';
import { buryInCell0 } from './bury-instance';
import { placeInstance, resumeInstance } from './place-instance';

/** The schedule handler's dependencies. */
export interface ScheduleDeps extends BuildDeps {
  readonly selector: DestinationSelector;
  /** Alternates per instance (max_attempts - 1), read once from config. */
  readonly numAlternates: number;
}

/** The mappings of the cast's instances and the build requests they still have (one round trip). */
async function readMappings(
  deps: BuildDeps,
  uuids: readonly string[],
): Promise<{ mappings: MappingState[]; buildRequests: Map<string, BuildRequest> }> {
  const rows = await getInstanceMappingsWithBuildRequests(deps.apiDb, uuids);
  const byUuid = new Map(rows.map((r) => [r.mapping.instanceUuid, r.mapping]));
  const buildRequests = new Map(
    rows.flatMap((r) => (r.buildRequest === undefined ? [] : [[r.mapping.instanceUuid, r.buildRequest] as const])),
  );
  const mappings = uuids.map((u) => {
    const m = byUuid.get(u);
    return { instanceUuid: u, exists: m !== undefined, cellUuid: m?.cell?.uuid, queuedForDelete: m?.queuedForDelete ?? false };
  });
  return { mappings, buildRequests };
}

/**
 * What the API DB would say of a first cast's instances on its first delivery, from the cast
 * itself (SuperConductorService 1.6 carries each BuildRequest's instance): every mapping exists,
 * in no cell, not queued for delete. Undefined when any instance is missing (an older sender):
 * read them. NOTE: a server deleted since the api's commit is not seen here; pointing its mapping
 * at the cell finds its BuildRequest gone, and `placeInstance` cleans up (claim, cell row,
 * API rows), as for a delete that lands while the instance is being scheduled.
 */
function carriedMappings(
  req: ScheduleAndBuildInstancesRequest,
  spec: RequestSpec,
): { mappings: MappingState[]; buildRequests: Map<string, BuildRequest> } | undefined {
  if (req.buildRequests.some((b) => b.instance === undefined)) return undefined;
  return {
    mappings: req.buildRequests.map((b) => ({ instanceUuid: b.instanceUuid, exists: true, cellUuid: undefined, queuedForDelete: false })),
    buildRequests: new Map(
      req.buildRequests.map((b) => {
        const instance = b.instance as Instance;
        return [
          b.instanceUuid,
          {
            instanceUuid: b.instanceUuid,
            projectId: instance.projectId || spec.projectId,
            instance,
            createdAt: instance.createdAt ?? new Date(),
            traceParent: undefined,
          },
        ];
      }),
    ),
  };
}

async function scheduleAndPlace(
  deps: ScheduleDeps,
  spec: RequestSpec,
  uuids: readonly string[],
  buildRequests: ReadonlyMap<string, BuildRequest>,
  requestId: string,
  log: Logger,
): Promise<void> {
  const outcome = await deps.selector.selectDestinations({ ...spec, numInstances: uuids.length }, uuids, deps.numAlternates);
  if (outcome.kind === 'selected') {
    for (const [i, instanceUuid] of uuids.entries()) {
      await placeInstance(
        deps,
        { instanceUuid, spec, hostList: outcome.destinations[i] ?? [], requestId, buildRequest: buildRequests.get(instanceUuid) },
        log,
      );
    }
    return;
  }
  if (outcome.kind === 'failed') await deps.claims.release(uuids);
  const fault = noValidHostFault(outcome.failure);
  log.warn({ instance_uuids: uuids, code: outcome.failure.code, diagnosis: outcome.failure.diagnosis }, 'no valid host: burying in cell0');
  for (const instanceUuid of uuids) await buryInCell0(deps, instanceUuid, spec, fault, requestId);
}

async function resumeAll(
  deps: ScheduleDeps,
  plan: BuildPlan,
  mappings: readonly MappingState[],
  spec: RequestSpec,
  requestId: string,
  log: Logger,
): Promise<void> {
  for (const r of plan.resume) {
    const m = mappings.find((x) => x.instanceUuid === r.instanceUuid);
    await resumeInstance(
      deps,
      { ...r, mappedBefore: m?.cellUuid !== undefined, queuedForDelete: m?.queuedForDelete ?? false },
      spec,
      requestId,
      log,
    );
  }
}

/**
 * `schedule_and_build_instances` (DESIGN steps 2 and 4): one SelectDestinations call for
 * the request's unplaced instances with the configured number of alternates, then per
 * instance either the cell placement and build cast, or (NoValidHost) burial in cell0 with
 * the scheduler's diagnosis. Redelivery-safe: instances a previous delivery already put in a
 * cell are finished, never scheduled again (looked for in every cell unless this is the
 * create's first cast on its first delivery, see {@link mayBeInACell}). A retryable scheduler failure throws, so the
 * bus redelivers the cast (dead-lettered after its delivery limit).
 */
export function scheduleAndBuildInstancesHandler(deps: ScheduleDeps) {
  return async (req: ScheduleAndBuildInstancesRequest, ctx: CastContext): Promise<void> => {
    const spec = req.requestSpec;
    const uuids = req.buildRequests.map((b) => b.instanceUuid);
    if (spec === undefined || uuids.length === 0) {
      ctx.logger.warn({ instances: uuids.length }, 'schedule_and_build_instances without a request spec or instances: ignored');
      return;
    }
    const requestId = req.requestId || spec.requestId || `req-${uuids[0] ?? ''}`;
    const log = ctx.logger.child({ request_id: requestId });
    const maybePlaced = mayBeInACell({ redelivered: ctx.redelivered, recast: req.recast, rpcVersion: ctx.rpcVersion });
    // NOTE: a first cast on its first delivery cannot have put anything in a cell: no query per cell, and (1.6) no API DB read
    const { mappings, buildRequests } = (maybePlaced ? undefined : carriedMappings(req, spec)) ?? (await readMappings(deps, uuids));
    const unplaced = mappings.filter((m) => m.exists && m.cellUuid === undefined).map((m) => m.instanceUuid);
    const found = maybePlaced ? await deps.cells.locate(unplaced) : new Map<string, string>();
    const plan = planBuild(mappings, found);
    for (const s of plan.skipped) log.info({ instance_uuid: s.instanceUuid, reason: s.reason }, 'instance skipped');
    await resumeAll(deps, plan, mappings, spec, requestId, log);
    if (plan.toSchedule.length > 0) await scheduleAndPlace(deps, spec, plan.toSchedule, buildRequests, requestId, log);
  };
}
