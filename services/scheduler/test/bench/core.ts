/**
 * `pnpm exec tsx services/scheduler/test/bench/core.ts [--hosts 10000] [--copy 1000] [--decisions 20000] [--sample 50]`:
 * the scheduler's domain core alone, in one process, without I/O: SchedulerCore.selectDestinations
 * over in-memory ports shaped like the replica's adapters (a cached 1,000-candidate answer shared
 * by every decision, compute node records looked up by uuid, a claimer that always succeeds and
 * charges the copy like the candidate cache does). CPU microseconds per decision, so a change to
 * the core's hot path is measured apart from the machine's noise (the whole-system bench runs
 * five processes on two cores).
 */
import { randomUUID } from 'node:crypto';
import type { AllocationCandidate, GetAllocationCandidatesResponse } from '@cellsched/wire';
import type { ComputeNodeRecord } from '../../src/domain/host-state';
import { DEFAULT_POLICY } from '../../src/domain/policy';
import { SchedulerCore } from '../../src/domain/select-destinations';
import type { SchedulerPorts } from '../../src/ports';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const hosts = arg('hosts', 10_000);
const copy = Math.min(hosts, arg('copy', 1000));
const decisions = arg('decisions', 20_000);

const now = new Date();
const records = new Map<string, ComputeNodeRecord>();
const uuids: string[] = [];
for (let i = 0; i < hosts; i++) {
  const uuid = randomUUID();
  uuids.push(uuid);
  records.set(uuid, {
    uuid,
    host: `host-${i}`,
    nodename: `node-${i}`,
    cellUuid: i % 2 === 0 ? 'cell-1' : 'cell-2',
    cellDisabled: false,
    serviceDisabled: false,
    serviceDisabledReason: '',
    forcedDown: false,
    lastHeartbeatAt: now,
    aggregates: [],
    hypervisorType: 'qemu',
    hypervisorVersion: 6002000,
    supportedInstances: [{ arch: 'x86_64', hvType: 'qemu', vmMode: 'hvm' }],
    numIoOps: i % 5,
    failedBuilds: 0,
    vcpus: 64,
    vcpusUsed: 0,
    memoryMb: 262144,
    memoryMbUsed: 0,
    localGb: 2000,
    localGbUsed: 0,
    stats: {},
    cpuInfo: { arch: 'x86_64' },
  });
}
const answer: GetAllocationCandidatesResponse = { allocationRequests: [], providerSummaries: {} };
for (const uuid of uuids.slice(0, copy)) {
  answer.allocationRequests.push({
    allocations: [{ resourceProviderUuid: uuid, resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 } }],
    mappings: { '': { providerUuids: [uuid] } },
  });
  answer.providerSummaries[uuid] = {
    uuid,
    name: uuid,
    rootProviderUuid: uuid,
    parentProviderUuid: '',
    generation: 1,
    traits: [],
    aggregates: [],
    resources: {
      VCPU: { capacity: 64 * 16, used: 0 },
      MEMORY_MB: { capacity: 262_144 * 1.5, used: 0 },
      DISK_GB: { capacity: 4096, used: 0 },
    },
  };
}

const ports: SchedulerPorts = {
  snapshot: {
    getAllocationCandidates: () => Promise.resolve(answer),
    getComputeNodes: (list) => {
      const out = new Map<string, ComputeNodeRecord>();
      for (const u of list) {
        const r = records.get(u);
        if (r !== undefined) out.set(u, r);
      }
      return Promise.resolve(out);
    },
    getAggregates: () => Promise.resolve([]),
    getGroupMemberHosts: () => Promise.resolve(new Map()),
    getInstanceHosts: () => Promise.resolve(new Set()),
  },
  claimer: {
    claim: (_consumer, candidate: AllocationCandidate) => {
      for (const a of candidate.allocations) {
        const s = answer.providerSummaries[a.resourceProviderUuid];
        for (const [rc, n] of Object.entries(a.resources)) {
          const r = s?.resources[rc];
          if (r !== undefined) r.used += n;
        }
      }
      return Promise.resolve({ kind: 'claimed' as const, consumerGeneration: 1 });
    },
    claimMove: () => Promise.reject(new Error('the bench schedules boots only')),
    revertMove: () => Promise.resolve(),
    release: () => Promise.resolve(),
  },
  groupLock: { withLock: (_g, fn) => fn() },
  clock: { now: () => now },
};

async function main(): Promise<void> {
  const core = new SchedulerCore(ports, { ...DEFAULT_POLICY, hostSampleSize: arg('sample', 50) });
  const spec = (seed: number) => ({
    instanceUuid: '',
    projectId: 'bench',
    userId: 'bench',
    numInstances: 1,
    availabilityZone: '',
    instanceGroup: undefined,
    flavor: { id: 0, flavorid: 'b1', name: 'bench.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} },
    image: { id: 'img', name: 'cirros', diskFormat: 'qcow2', sizeBytes: 0, properties: {} },
    schedulerHints: {},
    requestedDestination: undefined,
    ignoreHosts: [],
    seed,
    requestId: 'r',
  });
  const run = async (n: number, base: number): Promise<number> => {
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const r = await core.selectDestinations({
        spec: spec(base + i),
        instanceUuids: [`i-${base + i}`],
        numAlternates: 2,
        allocationRequestVersion: '1.36',
      });
      if (r.kind !== 'selected') throw new Error(`unexpected ${r.kind}`);
    }
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / n;
  };
  await run(Math.min(5000, decisions), 0);
  const rounds: number[] = [];
  for (let k = 0; k < 5; k++) rounds.push(await run(decisions / 5, 1_000_000 * (k + 1)));
  rounds.sort((a, b) => a - b);
  process.stdout.write(
    `${hosts} hosts, copy of ${copy}: ${rounds.map((r) => r.toFixed(1)).join(' ')} µs CPU per decision (median ${rounds[2]?.toFixed(1)})\n`,
  );
}

void main();
