import type { GetAllocationCandidatesRequest, GetAllocationCandidatesResponse, InstanceGroup } from '@cellsched/wire';
import type { Clock, GroupLock, HostStateSnapshot, SchedulerPorts } from '../../src/ports';
import type { ComputeNodeRecord, HostAggregate } from '../../src/domain/host-state';
import { FakePlacement } from './fake-placement';
import { NOW, record } from './fixtures';

/** The cells' compute node records plus the fake placement, behind the HostStateSnapshot port. */
export class FakeSnapshot implements HostStateSnapshot {
  readonly records = new Map<string, ComputeNodeRecord>();
  aggregates: HostAggregate[] = [];
  /** Group uuid -> members known to the API (the test adds them as requests are made). */
  readonly groupMembers = new Map<string, Set<string>>();
  readonly calls = { candidates: 0, groupMemberHosts: 0 };

  constructor(readonly placement: FakePlacement) {}

  getAllocationCandidates(query: GetAllocationCandidatesRequest): Promise<GetAllocationCandidatesResponse> {
    this.calls.candidates += 1;
    return this.placement.getAllocationCandidates(query);
  }

  getComputeNodes(uuids: readonly string[]): Promise<ReadonlyMap<string, ComputeNodeRecord>> {
    const out = new Map<string, ComputeNodeRecord>();
    for (const u of uuids) {
      const r = this.records.get(u);
      if (r !== undefined) out.set(u, r);
    }
    return Promise.resolve(out);
  }

  getAggregates(): Promise<readonly HostAggregate[]> {
    return Promise.resolve(this.aggregates);
  }

  getGroupMemberHosts(group: InstanceGroup, exclude: readonly string[] = []): Promise<ReadonlyMap<string, number>> {
    this.calls.groupMemberHosts += 1;
    const members = new Set([...group.members, ...(this.groupMembers.get(group.uuid) ?? [])].filter((m) => !exclude.includes(m)));
    const byHost = new Map<string, number>();
    for (const m of members) {
      for (const rp of this.placement.allocations.get(m)?.keys() ?? []) {
        const host = this.records.get(rp)?.host;
        if (host !== undefined) byHost.set(host, (byHost.get(host) ?? 0) + 1);
      }
    }
    return Promise.resolve(byHost);
  }

  getInstanceHosts(instanceUuids: readonly string[]): Promise<ReadonlySet<string>> {
    const hosts = new Set<string>();
    for (const u of instanceUuids) {
      for (const rp of this.placement.allocations.get(u)?.keys() ?? []) {
        const host = this.records.get(rp)?.host;
        if (host !== undefined) hosts.add(host);
      }
    }
    return Promise.resolve(hosts);
  }
}

/** An in-process mutex per group; records the highest number of holders seen at once. */
export class FakeGroupLock implements GroupLock {
  private readonly tails = new Map<string, Promise<void>>();
  private holders = 0;
  maxHolders = 0;
  acquisitions = 0;

  async withLock<T>(groupUuid: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(groupUuid) ?? Promise.resolve();
    let unlock: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      unlock = resolve;
    });
    this.tails.set(
      groupUuid,
      previous.then(() => mine),
    );
    await previous;
    this.acquisitions += 1;
    this.holders += 1;
    this.maxHolders = Math.max(this.maxHolders, this.holders);
    try {
      return await fn();
    } finally {
      this.holders -= 1;
      unlock();
    }
  }
}

export const fixedClock = (now: Date = NOW): Clock => ({ now: () => now });

/** A cloud of identical compute nodes: `cells` of `hostsPerCell`, each with `inventory`. */
export function fakeCloud(
  cells: number,
  hostsPerCell: number,
  inventory: Record<string, number> = { VCPU: 8, MEMORY_MB: 8192, DISK_GB: 100 },
): { placement: FakePlacement; snapshot: FakeSnapshot; lock: FakeGroupLock; ports: SchedulerPorts } {
  const placement = new FakePlacement();
  const snapshot = new FakeSnapshot(placement);
  for (let c = 1; c <= cells; c += 1) {
    for (let h = 1; h <= hostsPerCell; h += 1) {
      const uuid = `cn-c${c}-${String(h).padStart(3, '0')}`;
      placement.addProvider(uuid, inventory);
      snapshot.records.set(uuid, record({ uuid, host: `host-c${c}-${h}`, nodename: `node-c${c}-${h}`, cellUuid: `cell-${c}` }));
    }
  }
  const lock = new FakeGroupLock();
  return { placement, snapshot, lock, ports: { snapshot, claimer: placement, groupLock: lock, clock: fixedClock() } };
}
