import { deleteBuildRequest, setInstanceMappingCell, type BuildRequest } from '@cellsched/api-db';
import { destroyInstance, getInstance, toWireInstance, type InstanceRecord } from '@cellsched/cell-db';
import { activeTraceParent } from '@cellsched/bus';
import type { RequestSpec, Selection } from '@cellsched/wire';
import type { Logger } from 'pino';
import { EVENT_SCHEDULE } from '../domain/build-plan';
import { castFirstBuild, firstBuild, resumeStep } from '../domain/first-build';
import { forgetServer, instanceFrom, type BuildDeps } from './build-deps';
import type { CellHandle } from './cells';
import { cellBuildPorts } from './cell-ports';

/** One scheduled instance: where it goes (chosen host first, then the alternates). */
export interface Placement {
  readonly instanceUuid: string;
  readonly spec: RequestSpec;
  readonly hostList: readonly Selection[];
  readonly requestId: string;
  /** The build request as read before scheduling; undefined: it was already gone (the user deleted the server). */
  readonly buildRequest: BuildRequest | undefined;
}

/** The user deleted the server while it was scheduled: release the claim, leave nothing behind. Idempotent. */
async function cleanUpDeleted(deps: BuildDeps, cell: CellHandle, instanceUuid: string, log: Logger): Promise<'deleted'> {
  await deps.claims.release([instanceUuid]);
  await destroyInstance(cell.pool, instanceUuid);
  await forgetServer(deps, instanceUuid);
  log.info({ instance_uuid: instanceUuid, reason: 'server deleted while being scheduled' }, 'claim released, nothing left');
  return 'deleted';
}

/**
 * Casts the first build (attempt 1) to `compute.<host>` on the cell's bus. The compute dedups
 * per (host, instance, attempt). A cast the broker refuses (no compute serves that host) is that
 * host's failure: the cell conductor retries the alternates ({@link castFirstBuild}).
 */
async function castBuild(
  deps: BuildDeps,
  cell: CellHandle,
  inst: InstanceRecord,
  hostList: readonly Selection[],
  spec: RequestSpec,
  requestId: string,
  log: Logger,
): Promise<void> {
  const build = firstBuild(toWireInstance(inst, cell.uuid), inst.buildAttempt, cell.name, hostList, spec, requestId);
  if (cell.compute === undefined || build === undefined)
    throw new Error(`cannot cast the build of ${inst.uuid}: cell ${cell.uuid} has no bus or no host`);
  await castFirstBuild(cellBuildPorts(cell, deps.claims), log, build);
}

async function createInCell(deps: BuildDeps, cell: CellHandle, p: Placement, br: BuildRequest): Promise<InstanceRecord> {
  const chosen = p.hostList[0] as Selection;
  const { instance } = await deps.cellInstances(cell.pool).write({
    instance: {
      ...instanceFrom(br, p.spec),
      vmState: 'building',
      taskState: 'scheduling',
      host: chosen.serviceHost,
      node: chosen.nodename,
      availabilityZone: chosen.availabilityZone || p.spec.availabilityZone || null,
      buildHostList: p.hostList.slice(1),
      buildRequestSpec: p.spec,
      buildDeadlineAt: new Date(Date.now() + deps.buildTimeoutMs),
      traceParent: activeTraceParent() ?? null, // the watchdog resumes this trace
    },
    action: { requestId: p.requestId, action: 'create', event: EVENT_SCHEDULE, host: chosen.serviceHost },
  });
  return instance;
}

/**
 * DESIGN step 4 for one scheduled instance: create it in the chosen host's cell (ON CONFLICT
 * DO NOTHING), record the create action's schedule event, point the mapping at the cell and
 * delete the build request (one statement), cast `build_and_run_instance` with [chosen,
 * ...alternates]. Build request gone (before scheduling, or by the time it is deleted): the
 * user deleted the server, so the claim is released and the instance, mapping and request
 * spec are removed. Idempotent.
 */
export async function placeInstance(deps: BuildDeps, p: Placement, log: Logger): Promise<'cast' | 'deleted'> {
  const chosen = p.hostList[0];
  if (chosen === undefined) throw new Error(`the scheduler returned no host for ${p.instanceUuid}`);
  const cell = deps.cells.cell(chosen.cellUuid);
  if (p.buildRequest === undefined) return cleanUpDeleted(deps, cell, p.instanceUuid, log);
  const inst = await createInCell(deps, cell, p, p.buildRequest);
  if (!(await deps.cellMappings.write({ instanceUuid: p.instanceUuid, cellId: await deps.cells.mappingId(cell.uuid) })))
    return cleanUpDeleted(deps, cell, p.instanceUuid, log);
  await castBuild(deps, cell, inst, p.hostList, p.spec, p.requestId, log);
  log.info(
    { instance_uuid: p.instanceUuid, selected_host: chosen.serviceHost, target_cell: cell.name, alternates: p.hostList.length - 1 },
    'build cast',
  );
  return 'cast';
}

/** The Selection of the host an instance already names (for a recast; its allocation is already claimed). Pure. */
function currentSelection(inst: InstanceRecord, cellUuid: string): Selection {
  return {
    computeNodeUuid: '',
    serviceHost: inst.host ?? '',
    nodename: inst.node ?? '',
    cellUuid,
    availabilityZone: inst.availabilityZone ?? '',
    allocationRequest: undefined,
  };
}

/**
 * A redelivered cast for an instance a previous delivery already created in `cellUuid`:
 * finish what that delivery left (mapping, build request, cast) without scheduling again.
 * The build is cast again only while the instance is still on its first attempt and
 * building (the compute ignores a build of an attempt it already ran). Idempotent.
 */
export async function resumeInstance(
  deps: BuildDeps,
  r: { instanceUuid: string; cellUuid: string; mappedBefore: boolean; queuedForDelete: boolean },
  spec: RequestSpec,
  requestId: string,
  log: Logger,
): Promise<'cast' | 'deleted' | 'settled'> {
  const cell = deps.cells.cell(r.cellUuid);
  const inst = await getInstance(cell.pool, r.instanceUuid);
  if (inst === undefined) return 'settled';
  await setInstanceMappingCell(deps.apiDb, r.instanceUuid, await deps.cells.mappingId(cell.uuid));
  const removedNow = await deleteBuildRequest(deps.apiDb, r.instanceUuid);
  const step = resumeStep({
    buildRequestRemovedNow: removedNow,
    mappedBefore: r.mappedBefore,
    queuedForDelete: r.queuedForDelete,
    cellHasBus: cell.compute !== undefined,
    vmState: inst.vmState,
    buildAttempt: inst.buildAttempt,
    host: inst.host,
  });
  if (step === 'clean_up') return cleanUpDeleted(deps, cell, r.instanceUuid, log);
  if (step === 'settled') return 'settled';
  await castBuild(deps, cell, inst, [currentSelection(inst, cell.uuid), ...inst.buildHostList], spec, requestId, log);
  log.info({ instance_uuid: r.instanceUuid, selected_host: inst.host, target_cell: cell.name }, 'build cast again (redelivery)');
  return 'cast';
}
