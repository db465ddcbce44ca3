/**
 * The part of Nova's resource tracker the scheduler reads (compute_nodes.stats): per host, the
 * builds in flight (`io_workload`, IoOpsWeigher), the consecutive failed builds reset by a
 * success (`failed_builds`, BuildFailureWeigher) and the instances (`num_instances`,
 * running_vms). Hosts whose stats changed are kept until {@link HostStatsTracker.take} hands
 * them over for the next periodic update. Pure state, no I/O.
 */
export class HostStatsTracker {
  private readonly inFlight = new Map<string, number>();
  private readonly failed = new Map<string, number>();
  private readonly changed = new Set<string>();

  /** A build began on the host (Nova's instance claim). */
  buildStarted(host: string): void {
    this.inFlight.set(host, (this.inFlight.get(host) ?? 0) + 1);
    this.changed.add(host);
  }

  /** A build ended on the host: a success resets its failure count, a failure adds one (Nova's build_succeeded / build_failed). */
  buildEnded(host: string, succeeded: boolean): void {
    const n = (this.inFlight.get(host) ?? 1) - 1;
    if (n > 0) this.inFlight.set(host, n);
    else this.inFlight.delete(host);
    if (succeeded) this.failed.delete(host);
    else this.failed.set(host, (this.failed.get(host) ?? 0) + 1);
    this.changed.add(host);
  }

  /** The host's instances changed (a guest placed or destroyed). */
  instancesChanged(host: string): void {
    this.changed.add(host);
  }

  /** The host's stats as Nova stores them (decimal strings). */
  statsOf(host: string, instances: number): Record<string, string> {
    const io = this.inFlight.get(host) ?? 0;
    return {
      num_instances: String(instances),
      num_vm_active: String(instances),
      num_vm_building: String(io),
      io_workload: String(io),
      failed_builds: String(this.failed.get(host) ?? 0),
    };
  }

  /** The hosts changed since the last call (and forgets them). */
  take(): string[] {
    const hosts = [...this.changed];
    this.changed.clear();
    return hosts;
  }
}
