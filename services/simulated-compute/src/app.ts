import { Bus, type CastSubscription } from '@cellsched/bus';
import type { ComputeResources, ReportClient } from '@cellsched/placement-client';
import { CellConductorServiceService, ComputeServiceService } from '@cellsched/wire';
import type { Logger } from 'pino';
import { buildHandler, terminateHandler, type ComputeDeps } from './adapters/build-handler';
import { FaultControl, startControlServer } from './adapters/control-server';
import { registerHosts, reportToPlacement } from './adapters/registration';
import { seededRandom, type FaultPlan } from './domain/fault-plan';
import { Guests, type SimulatedHost } from './domain/hosts';

export interface SimulatedComputeOptions {
  readonly transportUrl: string;
  readonly logger: Logger;
  readonly hosts: readonly SimulatedHost[];
  readonly resources: ComputeResources;
  readonly traits: readonly string[];
  readonly report: ReportClient;
  readonly buildLatencyMs: number;
  readonly heartbeatIntervalMs: number;
  readonly prefetch: number;
  readonly hostsPerConnection: number;
  readonly faults: FaultPlan;
  readonly seed: number;
  /** -1: no control endpoint. */
  readonly controlPort: number;
  readonly crash: () => void;
}

export interface RunningCompute { readonly controlPort: number | undefined; readonly guests: Guests; readonly control: FaultControl; stop(): Promise<void> }

/** Serving a host declares two quorum queues (its queue and its DLQ): do many at once, it is broker-bound. */
const DECLARE_CONCURRENCY = 32;

async function serveHosts(o: SimulatedComputeOptions, deps: ComputeDeps, buses: Bus[]): Promise<CastSubscription[]> {
  const subs: CastSubscription[] = [];
  for (let i = 0; i < o.hosts.length; i += o.hostsPerConnection) {
    // NOTE: one channel per host queue; a connection holds at most hostsPerConnection of them (RabbitMQ's channel_max is 2047).
    const bus = i === 0 ? buses[0] as Bus : await Bus.connect({ url: o.transportUrl, logger: o.logger, name: `simulated-compute-${i}` });
    if (i > 0) buses.push(bus);
    const chunk = o.hosts.slice(i, i + o.hostsPerConnection);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let h = chunk[next++]; h !== undefined; h = chunk[next++]) {
        subs.push(await bus.serve(ComputeServiceService, { buildAndRunInstance: buildHandler(deps, h.host), terminateInstance: terminateHandler(deps, h.host) },
          { server: h.host, prefetch: o.prefetch, maxDeliveries: 10 }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(DECLARE_CONCURRENCY, chunk.length) }, worker));
  }
  return subs;
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
 * compute nodes through the cell conductor, reports providers to placement, then heartbeats.
 */
export async function startSimulatedCompute(o: SimulatedComputeOptions): Promise<RunningCompute> {
  const first = await Bus.connect({ url: o.transportUrl, logger: o.logger, name: 'simulated-compute' });
  const buses = [first];
  const conductor = first.castClient(CellConductorServiceService);
  const control = new FaultControl(o.faults);
  const guests = new Guests();
  const deps: ComputeDeps = {
    conductor, guests, buildLatencyMs: o.buildLatencyMs, random: seededRandom(o.seed), faults: () => control.current(),
    hangReleased: () => control.released(), crash: o.crash,
  };
  const subs = await serveHosts(o, deps, buses);
  await registerHosts(conductor, o.hosts, o.resources);
  await untilDone(() => reportToPlacement(o.report, o.hosts, o.resources, o.traits), o.logger);
  const names = o.hosts.map((h) => h.host);
  const beat = (): void => { conductor.cast('serviceHeartbeats', { binary: 'nova-compute', hosts: names }).catch((err: unknown) => o.logger.warn({ err }, 'heartbeat failed')); };
  beat();
  const timer = setInterval(beat, o.heartbeatIntervalMs);
  const ctl = o.controlPort >= 0 ? await startControlServer(o.controlPort, control, guests) : undefined;
  o.logger.info({ hosts: o.hosts.length, control_port: ctl?.port, seed: o.seed }, 'simulated compute ready');
  return {
    controlPort: ctl?.port, guests, control,
    stop: async () => {
      clearInterval(timer);
      ctl?.server.close();
      control.update({ hang: false });
      await Promise.all(subs.map((s) => s.close(5000)));
      await Promise.all(buses.map((b) => b.close()));
    },
  };
}
