import { isPublishUnroutable, type CastClient, type CastContext } from '@cellsched/bus';
import { makeFailure } from '@cellsched/grpc';
import {
  CellConductorServiceService,
  FAILURE_CODES,
  type BuildAndRunInstanceRequest,
  type Failure,
  type TerminateInstanceRequest,
} from '@cellsched/wire';
import { buildHangs, decideOutcome, type FaultPlan } from '../domain/fault-plan';
import type { HostStatsTracker } from '../domain/host-stats';
import type { Guests } from '../domain/hosts';

/** What the build handler of every host shares. */
export interface ComputeDeps {
  readonly conductor: CastClient<typeof CellConductorServiceService>;
  readonly guests: Guests;
  readonly buildLatencyMs: number;
  readonly random: () => number;
  /** The current fault plan (changed at run time over the control endpoint). */
  readonly faults: () => FaultPlan;
  /** Resolves when hanging is switched off. */
  readonly hangReleased: (host: string) => Promise<void>;
  /** How long a simulated instance step takes. */
  readonly stepLatencyMs: number;
  /** Resolves when this step on this host no longer hangs. */
  readonly stepReleased: (step: string, host: string) => Promise<void>;
  /** Ends the process abruptly (SIGKILL of itself): the "crash mid-build" fault. */
  readonly crash: () => void;
  /** The resource tracker's stats (builds in flight, consecutive failures). */
  readonly tracker: HostStatsTracker;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A report the broker could not route: the cell's `conductor` queue does not exist (no cell
 * conductor has started on this bus yet). Retryable, unlike other unroutable casts: the
 * conductor declares its queue when it starts, and the redelivered build reports again (the
 * guest is kept, so it is not built twice).
 */
export function conductorUnreachable(err: unknown): never {
  if (isPublishUnroutable(err)) {
    throw Object.assign(new Error(`no cell conductor queue on this bus yet: ${err.message}`), {
      code: FAILURE_CODES.compute.conductorUnroutable,
      retryable: true,
    });
  }
  throw err;
}

/** Asks the cell conductor to retry the build on the next alternate (Nova's reschedule): this host failed it. */
async function reportReschedule(
  deps: ComputeDeps,
  host: string,
  req: BuildAndRunInstanceRequest,
  attempt: number,
  failure: Failure,
): Promise<void> {
  await deps.conductor.cast('buildInstances', {
    instance: req.instance,
    requestSpec: req.requestSpec,
    hostList: req.hostList.slice(1),
    failedHost: host,
    failure,
    attempt,
    requestId: req.requestId,
  });
}

async function reportFailure(
  deps: ComputeDeps,
  host: string,
  req: BuildAndRunInstanceRequest,
  attempt: number,
  reschedule: boolean,
): Promise<void> {
  const uuid = req.instance?.uuid ?? '';
  if (reschedule) {
    const failure = makeFailure(
      FAILURE_CODES.compute.buildRescheduled,
      `Build of instance ${uuid} was re-scheduled: simulated build failure`,
      { retryable: true, expected: true },
    );
    await reportReschedule(deps, host, req, attempt, failure);
    return;
  }
  const failure = makeFailure(
    FAILURE_CODES.compute.buildAborted,
    `Build of instance ${uuid} aborted: simulated non-reschedulable failure`,
    { expected: true },
  );
  await deps.conductor.cast('buildAborted', { instanceUuid: uuid, host, attempt, failure, requestId: req.requestId });
}

/** The host a cast is for: the `<host>` of its `compute.<host>` routing key (the bus delivers only keys this process serves). */
export function hostOf(ctx: CastContext): string {
  if (ctx.server === undefined)
    throw Object.assign(new Error(`cast without a host in routing key ${ctx.routingKey}`), {
      code: FAILURE_CODES.compute.noHost,
      retryable: false,
    });
  return ctx.server;
}

/**
 * `build_and_run_instance` on the host the cast was sent to: "spawn" (wait the build latency), then report to the
 * cell conductor. Idempotent: a redelivered build of an attempt this process already spawned
 * reports success again without building; after a crash the process has no guests, builds
 * again on the same host, and the conductor's guard (host + attempt) accepts at most one
 * success, terminating a guest that lost. Acked only after the report is confirmed.
 */
export function buildHandler(deps: ComputeDeps) {
  return async (req: BuildAndRunInstanceRequest, ctx: CastContext): Promise<void> => {
    const host = hostOf(ctx);
    const uuid = req.instance?.uuid ?? '';
    const attempt = req.attempt >= 1 ? req.attempt : 1;
    const node = req.hostList[0]?.nodename ?? host;
    if (!deps.guests.has(host, uuid, attempt)) {
      const outcome = decideOutcome(deps.faults(), deps.random(), host);
      deps.tracker.buildStarted(host);
      try {
        if (buildHangs(deps.faults(), host)) await deps.hangReleased(host);
        await sleep(outcome === 'crash' ? deps.buildLatencyMs / 2 : deps.buildLatencyMs);
        if (outcome === 'crash') deps.crash();
      } finally {
        deps.tracker.buildEnded(host, outcome === 'succeed' || outcome === 'crash');
      }
      ctx.logger.info({ instance_uuid: uuid, host, attempt, outcome }, 'build finished');
      if (outcome === 'reschedule' || outcome === 'abort')
        return reportFailure(deps, host, req, attempt, outcome === 'reschedule').catch(conductorUnreachable);
      deps.guests.add(host, uuid, attempt);
    }
    await deps.conductor
      .cast('buildSucceeded', { instanceUuid: uuid, host, node, attempt, requestId: req.requestId })
      .catch(conductorUnreachable);
  };
}

/** `terminate_instance`: destroys a guest of this attempt or older (a stale build). Idempotent. */
export function terminateHandler(deps: ComputeDeps) {
  return async (req: TerminateInstanceRequest, ctx: CastContext): Promise<void> => {
    const host = hostOf(ctx);
    const removed = deps.guests.remove(host, req.instanceUuid, req.attempt);
    ctx.logger.info({ instance_uuid: req.instanceUuid, host, attempt: req.attempt, removed, reason: req.reason }, 'terminate instance');
  };
}

/** The code of a build cast to a host no compute process serves any more. */
export const HOST_NOT_SERVED = FAILURE_CODES.compute.hostNotServed;

/**
 * `build_and_run_instance` for a host this process no longer simulates (nor any other: the
 * bus found no queue bound to it; see the bus's `notServed`): that host failed the build, so
 * the cell conductor moves it to the next alternate, or ERROR when none is left. Idempotent
 * (the conductor recognises a repeat by host and attempt).
 */
export function notServedBuildHandler(deps: ComputeDeps) {
  return async (req: BuildAndRunInstanceRequest, ctx: CastContext): Promise<void> => {
    const host = hostOf(ctx);
    const attempt = req.attempt >= 1 ? req.attempt : 1;
    const failure = makeFailure(HOST_NOT_SERVED, `host ${host} is not served by any compute process (it was removed)`, {
      retryable: true,
      expected: true,
    });
    ctx.logger.warn({ instance_uuid: req.instance?.uuid, host, attempt }, 'build for a host nobody serves: reported as its failure');
    await reportReschedule(deps, host, req, attempt, failure).catch(conductorUnreachable);
  };
}

/** `terminate_instance` for a host nobody serves: no guest can run there, nothing to do. */
export function notServedTerminateHandler() {
  return async (req: TerminateInstanceRequest, ctx: CastContext): Promise<void> => {
    ctx.logger.info({ instance_uuid: req.instanceUuid, host: ctx.server }, 'terminate for a host nobody serves: nothing runs there');
    return Promise.resolve();
  };
}
