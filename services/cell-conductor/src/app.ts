import type { Bus, CastSubscription } from '@cellsched/bus';
import { PlacementRestError, type PlacementClient, type ReportClient } from '@cellsched/placement-client';
import { isTransient, retryTransient, retryWhileTransient } from '@cellsched/transient-retry';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { inSavedTrace, instanceActionHandler, instanceStepResultHandler } from './adapters/action-handlers';
import { PgActionRepository } from './adapters/action-repository';
import { AllocationAudit, type AuditReport } from './adapters/allocation-audit';
import { PgBuildRepository } from './adapters/build-repository';
import { buildAbortedHandler, buildSucceededHandler } from './adapters/build-result-handlers';
import { runBuildWatchdog } from './adapters/build-watchdog';
import { busComputeCaster } from './adapters/compute-caster';
import { reportComputeHostsHandler, serviceHeartbeatsHandler, updateHostStatsHandler } from './adapters/host-handlers';
import { removeRetiredProviders, type RetiredProvidersPass } from './adapters/host-retirement';
import { PlacementInstanceClaimer } from './adapters/placement-claimer';
import { buildInstancesHandler } from './adapters/reschedule-handler';
import { autoConfirmResizes, cleanDeletedInstancesMoves, onHostsHeardFrom, runStepWatchdog } from './domain/action-passes';
import type { ActionPorts, BuildPorts, Clock } from './ports';

export interface CellConductorOptions {
  readonly pool: Pool;
  /** The cell's bus: its credentials reach this vhost only. */
  readonly bus: Bus;
  readonly placement: PlacementClient;
  readonly cellUuid: string;
  readonly logger: Logger;
  readonly buildTimeoutMs: number;
  readonly prefetch: number;
  /** Nova's service_down_time: a compute silent this long is down. */
  readonly serviceDownTimeMs: number;
  /** Period of the build watchdog; 0 disables the timer (runWatchdog still works). */
  readonly watchdogIntervalMs: number;
  /** Placement REST, for the allocation audit (provider allocations). */
  readonly report: ReportClient;
  /** Its base URL, named when the audit finds placement knows none of the cell's nodes. */
  readonly placementUrl?: string;
  /** Period of the allocation audit; 0 disables the timer (runAudit still works). */
  readonly auditIntervalMs: number;
  /** A suspicious allocation is healed only if still there this long after it was first seen. */
  readonly auditGraceMs: number;
  /** How long one delivery of a build cast retries while a dependency is unavailable (default 30 s; 0: none). */
  readonly dependencyRetryMs?: number;
  /** Deadline of one step of a server action (default 300 s): no result by then and the step has failed. */
  readonly stepTimeoutMs?: number;
  /** Nova's resize_confirm_window in seconds (default 0: no auto-confirm). */
  readonly resizeConfirmWindowS?: number;
}

/** What one pass of the action passes did (each also runs on the watchdog timer). */
export interface ActionPassesReport {
  /** Steps failed by the step watchdog (overdue, or on a host that is gone). */
  readonly stepsFailed: number;
  /** Resizes confirmed because resize_confirm_window passed. */
  readonly autoConfirmed: number;
  /** Migrations of deleted instances cleaned up. */
  readonly orphansCleaned: number;
}

export interface RunningCellConductor {
  readonly subscription: CastSubscription;
  /** One watchdog pass now; resolves with the number of lost builds moved on. */
  runWatchdog(): Promise<number>;
  /** One pass of the action passes now: step watchdog, auto-confirm, deleted instances' moves. */
  runActionPasses(): Promise<ActionPassesReport>;
  /** One allocation-audit pass now (`now` for tests of the grace period). */
  runAudit(now?: number): Promise<AuditReport>;
  /** One pass over retired hosts' providers still in placement (also run every audit interval). */
  removeRetiredProviders(): Promise<RetiredProvidersPass>;
  /** Stops the timers and the consumer (in-flight casts finish and are acked). */
  stop(): Promise<void>;
}

/** The system clock (build deadlines, launched_at). */
const systemClock: Clock = { now: () => new Date() };

/** What a retried audit pass may wait out: a transient failure, or placement answering 5xx (starting, overloaded). */
const isTransientForAudit = (err: unknown): boolean => isTransient(err) || (err instanceof PlacementRestError && err.status >= 500);

function periodic(ms: number, fn: () => Promise<unknown>, log: Logger, what: string): () => void {
  if (ms <= 0) return () => undefined;
  let running = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    // NOTE: a pass cut short by the process stopping (its pool closed under it) did not fail: no `failed` line for it
    fn()
      .catch((err: unknown) =>
        stopped ? log.info({ err: String(err) }, `${what} interrupted by the stop`) : log.error({ err }, `${what} failed`),
      )
      .finally(() => {
        running = false;
      });
  }, ms);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/**
 * Serves the cell bus topic `conductor` (CellConductorService 1.4): build results, the in-cell
 * retry, service and compute-node reports, heartbeats, server actions and their step results; and
 * runs the build watchdog, the action passes (step watchdog, auto-confirm, deleted instances'
 * moves), the allocation audit and the retired providers' sweep.
 */
export async function startCellConductor(o: CellConductorOptions): Promise<RunningCellConductor> {
  const ports: BuildPorts = {
    instances: new PgBuildRepository(o.pool, o.cellUuid),
    claimer: new PlacementInstanceClaimer(o.placement),
    compute: busComputeCaster(o.bus.castClient(ComputeServiceService)),
    clock: systemClock,
    buildTimeoutMs: o.buildTimeoutMs,
  };
  const actionPorts: ActionPorts = {
    actions: new PgActionRepository(o.pool, o.cellUuid),
    placement: new PlacementInstanceClaimer(o.placement),
    compute: busComputeCaster(o.bus.castClient(ComputeServiceService)),
    clock: systemClock,
    stepTimeoutMs: o.stepTimeoutMs ?? 300_000,
  };
  // NOTE: an evacuation's source is cleaned when it is heard from; a failure here waits for its next heartbeat
  const heardFrom = (hosts: readonly string[], log: Logger): Promise<void> =>
    onHostsHeardFrom(actionPorts, log, hosts).then(
      () => undefined,
      (err: unknown) => log.warn({ err: String(err) }, 'evacuation cleanup of hosts heard from failed: retried at their next heartbeat'),
    );
  const retry = { budgetMs: o.dependencyRetryMs ?? 30_000 };
  const heartbeats = serviceHeartbeatsHandler(o.pool);
  const reports = reportComputeHostsHandler(o.pool, o.report);
  const subscription = await o.bus.serve(
    CellConductorServiceService,
    {
      // NOTE: the bus's 10 deliveries pass in ~20 s; a placement or PostgreSQL restart under load can take longer
      buildInstances: retryTransient(buildInstancesHandler(ports), retry),
      buildSucceeded: retryTransient(buildSucceededHandler(ports), retry),
      buildAborted: retryTransient(buildAbortedHandler(ports), retry),
      reportComputeHosts: async (req, ctx) => {
        await reports(req, ctx);
        await heardFrom(
          req.hosts.map((h) => h.host),
          ctx.logger,
        );
      },
      serviceHeartbeats: async (req, ctx) => {
        await heartbeats(req, ctx);
        await heardFrom(req.hosts, ctx.logger);
      },
      instanceAction: retryTransient(instanceActionHandler(actionPorts), retry),
      instanceStepResult: retryTransient(instanceStepResultHandler(actionPorts), retry),
      updateHostStats: retryTransient(updateHostStatsHandler(o.pool), retry),
    },
    { prefetch: o.prefetch, maxDeliveries: 10 },
  );
  const runBuilds = (): Promise<number> => runBuildWatchdog(o.pool, ports, { serviceDownTimeMs: o.serviceDownTimeMs }, o.logger);
  const runActionPasses = async (): Promise<ActionPassesReport> => {
    const stepsFailed = await runStepWatchdog(actionPorts, o.logger, { serviceDownTimeMs: o.serviceDownTimeMs }, inSavedTrace);
    const windowS = o.resizeConfirmWindowS ?? 0;
    const autoConfirmed = windowS > 0 ? await autoConfirmResizes(actionPorts, o.logger, windowS * 1000) : 0;
    return { stepsFailed, autoConfirmed, orphansCleaned: await cleanDeletedInstancesMoves(actionPorts, o.logger) };
  };
  const stopWatchdog = periodic(o.watchdogIntervalMs, runBuilds, o.logger, 'build watchdog');
  const stopActionPasses = periodic(o.watchdogIntervalMs, runActionPasses, o.logger, 'action passes');
  const audit = new AllocationAudit(o.pool, o.placement, o.auditGraceMs, o.placementUrl);
  // NOTE: a pass rides out a placement or PostgreSQL restart like a cast does; one that still cannot run is
  // logged `allocation audit failed` (error), which the chaos checker counts as a failure of the scenario.
  const runAudit = async (now?: number): Promise<AuditReport> => {
    const t0 = performance.now();
    const r = await retryWhileTransient(() => audit.run(now), {
      budgetMs: o.dependencyRetryMs ?? 30_000,
      retryable: isTransientForAudit,
      onRetry: (err, attempt, delay) =>
        o.logger.warn({ err: String(err), try: attempt, delay_ms: delay }, 'allocation audit hit an unavailable dependency, retrying'),
    });
    const level = r.healed.length > 0 || r.missing.length > 0 ? 'warn' : 'info';
    o.logger[level](
      {
        providers: r.providers,
        allocations: r.allocations,
        suspects: r.suspects,
        healed: r.healed,
        missing: r.missing,
        unknown_providers: r.unknownProviders,
        duration_ms: Math.round(performance.now() - t0),
      },
      'allocation audit',
    );
    return r;
  };
  const stopAudit = periodic(o.auditIntervalMs, runAudit, o.logger, 'allocation audit');
  const sweep = (): Promise<RetiredProvidersPass> => removeRetiredProviders(o.pool, o.report, o.logger);
  // NOTE: a retired host's provider that instances still held is deleted once they are gone (checked as often as the audit runs)
  const stopSweep = periodic(o.auditIntervalMs, sweep, o.logger, 'retired providers sweep');
  return {
    subscription,
    runWatchdog: runBuilds,
    runActionPasses,
    runAudit,
    removeRetiredProviders: sweep,
    stop: async () => {
      stopWatchdog();
      stopActionPasses();
      stopAudit();
      stopSweep();
      await subscription.close();
    },
  };
}
