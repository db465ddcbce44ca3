import { isPublishUnroutable, type CastClient, type CastContext } from '@cellsched/bus';
import { addInstanceFault, toWireInstance, updateInstance, type InstanceRecord } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import { makeFailure } from '@cellsched/grpc';
import { ComputeServiceService, FAILURE_CODES, type BuildAndRunInstanceRequest, type BuildInstancesRequest, type Selection, type TerminateInstanceRequest } from '@cellsched/wire';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { chooseAlternate, maxRetriesMessage, rescheduleDetail, type RescheduleDecision } from '../domain/reschedule';
import type { InstanceClaimer } from '../ports';
import { EVENT_COMPUTE_BUILD, EVENT_RESCHEDULE, recordEvent } from './action-events';
import { lockInstance, normalizeAttempt } from './instance-lock';

/** What the build handlers need. */
export interface BuildDeps {
  readonly pool: Pool;
  readonly claimer: InstanceClaimer;
  readonly compute: CastClient<typeof ComputeServiceService>;
  readonly cellUuid: string;
  /** How long a build may stay in `building` on one host before the watchdog looks at it. */
  readonly buildTimeoutMs: number;
}

/** A build to cast once the transaction committed. */
export type NextBuild = { readonly host: string; readonly request: BuildAndRunInstanceRequest } | undefined;

function nextBuild(deps: BuildDeps, inst: InstanceRecord, hostList: readonly Selection[], requestId: string): NextBuild {
  if (inst.host === null) return undefined;
  return {
    host: inst.host,
    request: { instance: toWireInstance(inst, deps.cellUuid), requestSpec: inst.buildRequestSpec, hostList: [...hostList], attempt: inst.buildAttempt, requestId },
  };
}

async function applyDecision(c: PoolClient, deps: BuildDeps, inst: InstanceRecord, req: BuildInstancesRequest, d: RescheduleDecision): Promise<NextBuild> {
  const reason = req.failure?.message ?? 'build failed';
  const skipped = d.skipped.map((s) => `${s.host}: ${s.reason}`).join('; ');
  if (d.kind === 'exhausted') {
    await deps.claimer.release(inst.uuid);
    const r = await updateInstance(c, inst.uuid, { vmState: 'error', taskState: null, host: null, node: null, buildHostList: [], buildDeadlineAt: null },
      { expectedVmState: ['building'] });
    if (r.kind !== 'updated') return undefined;
    await addInstanceFault(c, { instanceUuid: inst.uuid, code: 500, message: maxRetriesMessage(inst.uuid), host: req.failedHost,
      details: `last failure on ${req.failedHost}: ${reason}${skipped === '' ? '' : `; alternates dropped: ${skipped}`}` });
    return undefined;
  }
  const s = d.selection;
  const r = await updateInstance(c, inst.uuid, {
    host: s.serviceHost, node: s.nodename, taskState: 'scheduling', buildAttempt: inst.buildAttempt + 1, buildHostList: d.remaining,
    buildDeadlineAt: new Date(Date.now() + deps.buildTimeoutMs), ...(req.requestSpec === undefined ? {} : { buildRequestSpec: req.requestSpec }),
  }, { expectedVmState: ['building'] });
  if (r.kind !== 'updated') return undefined;
  await recordEvent(c, inst, req.requestId, EVENT_RESCHEDULE, s.serviceHost, { ok: true, details: rescheduleDetail(req.failedHost, reason, s.serviceHost) });
  return nextBuild(deps, r.instance, [s, ...d.remaining], req.requestId);
}

/**
 * The in-cell retry of one failed attempt, inside the caller's transaction: lock the row,
 * check it is still this attempt on the failed host, claim the first alternate that fits,
 * update the row. Returns the build to cast after commit. `alternatesFromRow`: the
 * alternates are the row's `build_host_list` (the watchdog has no message to read them from).
 */
export async function reschedule(c: PoolClient, deps: BuildDeps, req: BuildInstancesRequest, uuid: string, opts: { alternatesFromRow?: boolean } = {}): Promise<NextBuild> {
  const inst = await lockInstance(c, uuid);
  if (inst === undefined || inst.vmState !== 'building') return undefined; // deleted meanwhile, or already settled
  const attempt = normalizeAttempt(req.attempt);
  // NOTE: a redelivery after the commit but before the cast: the row already names the next
  // host; cast again (the compute and build_succeeded are idempotent), decide nothing new.
  if (inst.buildAttempt === attempt + 1 && inst.host !== req.failedHost) {
    const current = req.hostList.find((s) => s.serviceHost === inst.host);
    return current === undefined || opts.alternatesFromRow === true ? undefined : nextBuild(deps, inst, [current, ...inst.buildHostList], req.requestId);
  }
  if (inst.host !== req.failedHost || inst.buildAttempt !== attempt) return undefined; // stale report of an older attempt
  await recordEvent(c, inst, req.requestId, EVENT_COMPUTE_BUILD, req.failedHost, { ok: false, details: req.failure?.message ?? 'build failed' });
  const consumer = { uuid: inst.uuid, projectId: inst.projectId, userId: inst.userId };
  const alternates = opts.alternatesFromRow === true ? inst.buildHostList : req.hostList;
  const decision = await chooseAlternate(alternates, async (s) => {
    const o = await deps.claimer.claimSelection(consumer, s);
    return o.kind === 'claimed' ? { kind: 'claimed' } : { kind: 'skipped', reason: o.message };
  });
  return applyDecision(c, deps, inst, req, decision);
}

/** The failure code recorded when the broker refused a build cast: no compute serves its host. */
export const BUILD_CAST_UNROUTABLE = FAILURE_CODES.cellConductor.buildUnroutable;

/** The in-cell retry request that a refused cast of `next` amounts to: that host failed this attempt. Pure. */
function refusedCastReport(next: NonNullable<NextBuild>): BuildInstancesRequest {
  const { request, host } = next;
  return {
    instance: request.instance, requestSpec: request.requestSpec, hostList: request.hostList.slice(1), failedHost: host, attempt: request.attempt, requestId: request.requestId,
    failure: makeFailure(BUILD_CAST_UNROUTABLE, `the broker refused the build cast to compute.${host}: no compute serves host ${host}`, { retryable: true, expected: true }),
  };
}

/**
 * Casts a decided build to its host (after the decision committed). A cast the broker refuses
 * (no queue bound to `compute.<host>`: that host is not served by any compute process) is a
 * failure of that host for this request, handled like a compute's reschedulable failure: the
 * next alternate is claimed and cast to, until one is accepted or none is left (ERROR with
 * MaxRetriesExceeded and a fault naming the refused host). Never a silent end.
 */
export async function castNextBuild(deps: BuildDeps, next: NonNullable<NextBuild>, log: Logger): Promise<void> {
  let current: NextBuild = next;
  while (current !== undefined) {
    try {
      await deps.compute.cast('buildAndRunInstance', current.request, { server: current.host });
      return;
    } catch (err) {
      if (!isPublishUnroutable(err)) throw err;
      const report = refusedCastReport(current);
      log.warn({ instance_uuid: next.request.instance?.uuid, host: current.host, attempt: current.request.attempt }, 'build cast refused by the broker: trying the next alternate');
      current = await withTransaction(deps.pool, (c) => reschedule(c, deps, report, report.instance?.uuid ?? ''));
    }
  }
}

/**
 * Casts `terminate_instance` to a host. One the broker refuses is done: no compute serves that
 * host, so no guest of this instance runs there.
 */
export async function castTerminate(deps: BuildDeps, host: string, req: TerminateInstanceRequest, log: Logger): Promise<void> {
  try {
    await deps.compute.cast('terminateInstance', req, { server: host });
  } catch (err) {
    if (!isPublishUnroutable(err)) throw err;
    log.info({ instance_uuid: req.instanceUuid, host }, 'terminate not needed: no compute serves the host');
  }
}

/**
 * `build_instances` (a compute's reschedulable failure): in one transaction holding the
 * instance row, move the claim to the first alternate that fits (placement replace-claim,
 * so the failed host's allocation goes in the same write) and point the instance at it,
 * then cast the build there with the alternates left. None fits: release, ERROR with
 * Nova's MaxRetriesExceeded fault. Idempotent: a stale or repeated cast is recognised by
 * (host, build_attempt) and changes nothing; one whose cast was lost is cast again.
 */
export function buildInstancesHandler(deps: BuildDeps) {
  return async (req: BuildInstancesRequest, ctx: CastContext): Promise<void> => {
    const uuid = req.instance?.uuid ?? '';
    const next = await withTransaction(deps.pool, (c) => reschedule(c, deps, req, uuid));
    if (next === undefined) {
      ctx.logger.info({ instance_uuid: uuid, failed_host: req.failedHost }, 'reschedule settled');
      return;
    }
    ctx.logger.info({ instance_uuid: uuid, failed_host: req.failedHost, host: next.host, attempt: next.request.attempt }, 'build rescheduled');
    await castNextBuild(deps, next, ctx.logger);
  };
}
