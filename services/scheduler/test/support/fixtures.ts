import type { Flavor, ImageMeta, RequestSpec } from '@cellsched/wire';
import type { GroupPolicy, GroupState, HintedHosts, SchedulingContext } from '../../src/domain/context';
import type { ComputeNodeRecord, HostState, ResourceUsage } from '../../src/domain/host-state';
import { DEFAULT_POLICY, type SchedulerPolicy } from '../../src/domain/policy';

/** The fixed "now" of the unit tests. */
export const NOW = new Date('2026-11-22T03:00:00Z');

export function flavor(overrides: Partial<Flavor> = {}): Flavor {
  return {
    id: 0,
    flavorid: 'f1',
    name: 'm1.small',
    vcpus: 1,
    memoryMb: 512,
    rootGb: 1,
    ephemeralGb: 0,
    swap: 0,
    extraSpecs: {},
    ...overrides,
  };
}

export function image(overrides: Partial<ImageMeta> = {}): ImageMeta {
  return { id: 'img', name: 'cirros', diskFormat: 'qcow2', sizeBytes: 0, properties: {}, ...overrides };
}

export function spec(overrides: Partial<RequestSpec> = {}): RequestSpec {
  return {
    instanceUuid: '',
    projectId: 'p1',
    userId: 'u1',
    flavor: flavor(),
    image: image(),
    numInstances: 1,
    availabilityZone: '',
    instanceGroup: undefined,
    schedulerHints: {},
    requestedDestination: undefined,
    ignoreHosts: [],
    seed: 42,
    requestId: 'req-1',
    ...overrides,
  };
}

export function record(overrides: Partial<ComputeNodeRecord> = {}): ComputeNodeRecord {
  const uuid = overrides.uuid ?? 'cn-1';
  return {
    uuid,
    host: `host-${uuid}`,
    nodename: `node-${uuid}`,
    cellUuid: 'cell-1',
    cellDisabled: false,
    serviceDisabled: false,
    serviceDisabledReason: '',
    forcedDown: false,
    lastHeartbeatAt: NOW,
    aggregates: [],
    hypervisorType: 'qemu',
    hypervisorVersion: 6002000,
    supportedInstances: [{ arch: 'x86_64', hvType: 'qemu', vmMode: 'hvm' }],
    numIoOps: 0,
    failedBuilds: 0,
    vcpus: 8,
    vcpusUsed: 0,
    memoryMb: 8192,
    memoryMbUsed: 0,
    localGb: 100,
    localGbUsed: 0,
    stats: {},
    cpuInfo: {},
    ...overrides,
  };
}

/** Root provider usage: rc -> [capacity, used]. */
export type Usage = Readonly<Record<string, readonly [number, number]>>;

export function hostState(
  rec: Partial<ComputeNodeRecord> = {},
  usage: Usage = { VCPU: [8, 0], MEMORY_MB: [8192, 0], DISK_GB: [100, 0] },
  az = 'nova',
): HostState {
  const r = record(rec);
  const root = new Map<string, ResourceUsage>(Object.entries(usage).map(([rc, [capacity, used]]) => [rc, { capacity, used }]));
  const resources: Record<string, number> = { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 };
  return {
    record: r,
    availabilityZone: az,
    providers: new Map([[r.uuid, root]]),
    numInstancesAdded: 0,
    numIoOps: r.numIoOps,
    allocationCandidates: [{ allocations: [{ resourceProviderUuid: r.uuid, resources }], mappings: { '': { providerUuids: [r.uuid] } } }],
  };
}

export function group(policy: GroupPolicy, membersByHost: Readonly<Record<string, number>> = {}, maxServerPerHost = 1): GroupState {
  return { uuid: 'g1', policy, maxServerPerHost, membersByHost: new Map(Object.entries(membersByHost)) };
}

export function ctx(
  overrides: { spec?: RequestSpec; group?: GroupState; policy?: Partial<SchedulerPolicy>; now?: Date; hinted?: HintedHosts } = {},
): SchedulingContext {
  const s = overrides.spec ?? spec();
  return {
    spec: s,
    flavor: s.flavor ?? flavor(),
    image: s.image,
    group: overrides.group,
    policy: { ...DEFAULT_POLICY, ...overrides.policy },
    now: overrides.now ?? NOW,
    ...(overrides.hinted === undefined ? {} : { hinted: overrides.hinted }),
  };
}
