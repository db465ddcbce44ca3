import { Bus, BUS_ERROR, BusError, type CastSubscription } from '@cellsched/bus';
import type { ComputeResources, ReportClient } from '@cellsched/placement-client';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import type { Logger } from 'pino';
import {
  buildHandler,
  notServedBuildHandler,
  notServedTerminateHandler,
  terminateHandler,
  type ComputeDeps,
} from './adapters/build-handler';
import { FaultControl, startControlServer } from './adapters/control-server';
import { registerHosts, reportHostStats, reportToPlacement } from './adapters/registration';
import { instanceStepHandler, notServedStepHandler } from './adapters/step-handler';
import { seededRandom, stepHangs, type FaultPlan } from './domain/fault-plan';
import { HostStatsTracker } from './domain/host-stats';
import { Guests, type SimulatedHost } from './domain/hosts';

export interface SimulatedComputeOptions {
  readonly transportUrl: string;
  readonly logger: Logger;
  /** Names this process's queue (`compute-pool.<cell>.<processName>`): keep it across restarts. */
  readonly cell: string;
  readonly processName: string;
  readonly hosts: readonly SimulatedHost[];
  readonly resources: ComputeResources;
  readonly traits: readonly string[];
  readonly report: ReportClient;
  readonly buildLatencyMs: number;
  /** How long an instance step takes (default: the build latency). */
  readonly stepLatencyMs?: number;
  readonly heartbeatIntervalMs: number;
  /** How often the hosts whose stats changed are reported (default: the heartbeat interval). */
  readonly statsIntervalMs?: number;
  /** Builds in flight in the whole process (the queue's prefetch). */
  readonly prefetch: number;
  /** Hosts reported to placement at a time. Default 8 (the config default is 16). */
  readonly placementConcurrency?: number;
  readonly faults: FaultPlan;
  readonly seed: number;
  /** -1: no control endpoint. */
  readonly controlPort: number;
  readonly crash: () => void;
}

export interface RunningCompute {
  readonly controlPort: number | undefined;
  readonly guests: Guests;
  readonly control: FaultControl;
  /** The one queue this process consumes (all its hosts' `compute.<host>` keys are bound to it). */
  readonly queue: string;
  /** Whether its cell bus is connected now (the container health check). */
  connected(): boolean;
  stop(): Promise<void>;
}

/** The durable queue of one simulated-compute process of a cell. */
export function poolQueueName(cell: string, processName: string): string {
  return `compute-pool.${cell}.${processName}`;
}

/** How long start-up waits for the queue's previous owner (a dead incarnation of this process) to let go. */
const OWNER_WAIT_MS = 60_000;

/**
 * Serves every host from ONE queue bound to each `compute.<host>` key (see README, "Scale
 * decisions"): one channel and two quorum queues per process whatever its host count. The
 * bus dispatches each cast to the handler with `ctx.server` = the host it was sent to.
 */
async function serveHosts(o: SimulatedComputeOptions, deps: ComputeDeps, bus: Bus): Promise<CastSubscription> {
  const queue = poolQueueName(o.cell, o.processName);
  const deadline = Date.now() + OWNER_WAIT_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await bus.serve(
        ComputeServiceService,
        {
          buildAndRunInstance: buildHandler(deps),
          terminateInstance: terminateHandler(deps),
          instanceStep: instanceStepHandler(deps),
        },
        {
          servers: o.hosts.map((h) => h.host),
          queue,
          prefetch: o.prefetch,
          maxDeliveries: 10,
          notServed: {
            buildAndRunInstance: notServedBuildHandler(deps),
            terminateInstance: notServedTerminateHandler(),
            instanceStep: notServedStepHandler(deps),
          },
        },
      );
    } catch (err) {
      // NOTE: a crashed predecessor's connection may look alive to the broker for up to two heartbeats.
      if (!(err instanceof BusError && err.code === BUS_ERROR.queueLocked) || Date.now() + delay > deadline) throw err;
      o.logger.warn({ queue, retry_in_ms: delay }, 'queue still owned by another connection, waiting');
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * Retries `fn` (idempotent) while it throws, 0.5 s doubling to 5 s, for about two minutes:
 * placement may start after the computes (as nova-compute waits for it).
 */
async function untilDone(fn: () => Promise<void>, log: Logger, budgetMs = 120_000): Promise<void> {
  const end = Date.now() + budgetMs;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() + delay > end) throw err;
      log.warn({ err, retry_in_ms: delay }, 'placement report failed, retrying');
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * Starts the simulated hosts of one cell: declares and consumes each `compute.<host>` queue
 * first (so no cast to a host is unroutable once it is schedulable), registers services and
 * compute nodes through the cell conductor, reports providers to placement, then heartbeats and
 * reports the resource tracker's stats of the hosts whose stats changed, every stats interval.
 */
export async function startSimulatedCompute(o: SimulatedComputeOptions): Promise<RunningCompute> {
  const bus = await Bus.connect({ url: o.transportUrl, logger: o.logger, name: `simulated-compute ${o.cell}/${o.processName}` });
  try {
    const conductor = bus.castClient(CellConductorServiceService);
    const control = new FaultControl(o.faults);
    const tracker = new HostStatsTracker();
    const guests = new Guests((host) => tracker.instancesChanged(host));
    const deps: ComputeDeps = {
      tracker,
      conductor,
      guests,
      buildLatencyMs: o.buildLatencyMs,
      random: seededRandom(o.seed),
      faults: () => control.current(),
      hangReleased: (host) => control.released(host),
      crash: o.crash,
      stepLatencyMs: o.stepLatencyMs ?? o.buildLatencyMs,
      stepReleased: (step, host) => control.releasedWhen((p) => stepHangs(p, step, host)),
    };
    const started = Date.now();
    const sub = await serveHosts(o, deps, bus);
    const served = Date.now();
    // NOTE: this run's start time orders its reports after every earlier run's (a restart with fewer hosts retires the others)
    await registerHosts(conductor, o.hosts, o.resources, { computeProcess: o.processName, incarnation: started }, (h) =>
      tracker.statsOf(h, guests.count(h)),
    );
    const registered = Date.now();
    await untilDone(() => reportToPlacement(o.report, o.hosts, o.resources, o.traits, o.placementConcurrency), o.logger);
    const reported = Date.now();
    const names = o.hosts.map((h) => h.host);
    const beat = (): void => {
      conductor
        .cast('serviceHeartbeats', { binary: 'nova-compute', hosts: names })
        .catch((err: unknown) => o.logger.warn({ err }, 'heartbeat failed'));
    };
    beat();
    const timer = setInterval(beat, o.heartbeatIntervalMs);
    const nodes = new Map(o.hosts.map((h) => [h.host, h]));
    let reporting = false;
    let periods = 0;
    // NOTE: every host's stats about once a minute (Nova's periodic update), so a report lost after it was published is repaired
    const fullEvery = Math.max(1, Math.round(60_000 / (o.statsIntervalMs ?? o.heartbeatIntervalMs)));
    const reportStats = (): void => {
      if (reporting) return;
      reporting = true;
      periods += 1;
      reportHostStats(conductor, tracker, nodes, (h) => guests.count(h), periods % fullEvery === 0)
        .catch((err: unknown) => o.logger.warn({ err }, 'host stats update failed: reported again next period'))
        .finally(() => {
          reporting = false;
        });
    };
    const statsTimer = setInterval(reportStats, o.statsIntervalMs ?? o.heartbeatIntervalMs);
    const ctl = o.controlPort >= 0 ? await startControlServer(o.controlPort, control, guests) : undefined;
    o.logger.info(
      {
        hosts: o.hosts.length,
        queue: sub.queue,
        control_port: ctl?.port,
        seed: o.seed,
        queue_ms: served - started,
        register_ms: registered - served,
        placement_ms: reported - registered,
      },
      'simulated compute ready',
    );
    return {
      controlPort: ctl?.port,
      guests,
      control,
      queue: sub.queue,
      connected: () => bus.connected,
      stop: async () => {
        clearInterval(timer);
        clearInterval(statsTimer);
        ctl?.server.close();
        control.update({ hang: false, hangingHosts: [], steps: {} });
        await sub.close(5000);
        await bus.close();
      },
    };
  } catch (err) {
    await bus.close();
    throw err;
  }
}
