import type { CastClient } from '@cellsched/bus';
import { computeNodeInventory, type ComputeResources, type ReportClient } from '@cellsched/placement-client';
import type { CellConductorServiceService, ComputeHostReport } from '@cellsched/wire';
import type { HostStatsTracker } from '../domain/host-stats';
import type { SimulatedHost } from '../domain/hosts';

/** Nova's service version we report (any positive number; the scheduler does not gate on it). */
const SERVICE_VERSION = 66;
const BATCH = 200;

/**
 * What Nova's fake driver says of its node's CPU and of what it runs: supported_instances
 * `(arch, fake, hvm)` (ImagePropertiesFilter), cpu_info as the libvirt driver shapes it. Pure.
 */
export function hostPlatform(arch: string, vcpus: number): Pick<ComputeHostReport, 'supportedInstances' | 'cpuInfo'> {
  return {
    supportedInstances: [{ arch, hvType: 'fake', vmMode: 'hvm' }],
    cpuInfo: JSON.stringify({
      arch,
      model: 'qemu64',
      vendor: 'cellsched',
      topology: { cells: 1, sockets: 1, cores: vcpus, threads: 1 },
      features: [],
    }),
  };
}

function hostReport(h: SimulatedHost, r: ComputeResources, stats: Record<string, string>): ComputeHostReport {
  return {
    host: h.host,
    binary: 'nova-compute',
    topic: 'compute',
    serviceVersion: SERVICE_VERSION,
    computeNodeUuid: h.computeNodeUuid,
    hypervisorHostname: h.nodename,
    vcpus: r.vcpus,
    memoryMb: r.memoryMb,
    localGb: r.localGb,
    hypervisorType: 'fake',
    cpuAllocationRatio: r.cpuAllocationRatio ?? 4.0,
    ramAllocationRatio: r.ramAllocationRatio ?? 1.0,
    diskAllocationRatio: r.diskAllocationRatio ?? 1.0,
    vcpusUsed: 0,
    memoryMbUsed: 0,
    localGbUsed: 0,
    runningVms: 0,
    ...hostPlatform(h.arch, r.vcpus),
    stats,
  };
}

/** Who reports: the process (its pool queue's name in the cell) and when this run of it started (epoch ms). */
export interface ReporterIdentity {
  readonly computeProcess: string;
  readonly incarnation: number;
}

/**
 * Registers every host's service and compute node through the cell conductor, in batches, each
 * with the process's identity; the last batch also carries the whole host set, so the conductor
 * retires this process's hosts that are not in it (a restart with fewer hosts). Idempotent.
 */
export async function registerHosts(
  conductor: CastClient<typeof CellConductorServiceService>,
  hosts: readonly SimulatedHost[],
  r: ComputeResources,
  who: ReporterIdentity,
  statsOf: (host: string) => Record<string, string> = () => ({}),
): Promise<void> {
  for (let i = 0; i < hosts.length; i += BATCH) {
    const last = i + BATCH >= hosts.length;
    await conductor.cast('reportComputeHosts', {
      hosts: hosts.slice(i, i + BATCH).map((h) => hostReport(h, r, statsOf(h.host))),
      computeProcess: who.computeProcess,
      incarnation: who.incarnation,
      hostSet: last ? hosts.map((h) => h.host) : [],
    });
  }
}

/**
 * Reports each host to placement as Nova's resource tracker does: the provider (named after
 * the hypervisor hostname, uuid = compute node uuid), its inventory and traits. Runs
 * `concurrency` hosts at a time. Idempotent; generation conflicts are retried by the client.
 */
export async function reportToPlacement(
  report: ReportClient,
  hosts: readonly SimulatedHost[],
  r: ComputeResources,
  traits: readonly string[],
  concurrency = 8,
): Promise<void> {
  const inventory = computeNodeInventory(r);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let h = hosts[next++]; h !== undefined; h = hosts[next++]) {
      await report.ensureResourceProvider(h.computeNodeUuid, h.nodename);
      await report.setInventory(h.computeNodeUuid, inventory);
      await report.setTraits(h.computeNodeUuid, traits);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, hosts.length) }, worker));
}

/**
 * The periodic stats update (Nova's update_available_resource): the stats of the hosts `tracker`
 * says changed, or of every host with `all`, `BATCH` hosts a cast. A cast that fails to publish
 * puts its hosts back, so the next period reports them again; one published and then lost (a
 * conductor that dead-letters it) is made good by the next `all` report, which the conductor
 * writes only where a row differs.
 */
export async function reportHostStats(
  conductor: CastClient<typeof CellConductorServiceService>,
  tracker: HostStatsTracker,
  nodes: ReadonlyMap<string, SimulatedHost>,
  instances: (host: string) => number,
  all = false,
): Promise<number> {
  const changed = tracker.take();
  const hosts = all ? [...nodes.keys()] : changed.filter((h) => nodes.has(h));
  for (let i = 0; i < hosts.length; i += BATCH) {
    const batch = hosts.slice(i, i + BATCH);
    try {
      await conductor.cast('updateHostStats', {
        hosts: batch.map((h) => ({
          computeNodeUuid: nodes.get(h)?.computeNodeUuid ?? '',
          stats: tracker.statsOf(h, instances(h)),
          runningVms: instances(h),
        })),
      });
    } catch (err) {
      for (const h of hosts.slice(i)) tracker.instancesChanged(h);
      throw err;
    }
  }
  return hosts.length;
}
