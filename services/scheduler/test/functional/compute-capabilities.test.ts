/**
 * ComputeCapabilitiesFilter (on by default, as in Nova) on a real scheduler replica, real
 * placement and cell databases: a flavor's `capabilities:cpu_info:arch` is matched against the
 * cpu_info the computes wrote into their compute_nodes rows.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_POLICY } from '../../src/domain/policy';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let withFilter: SchedulerClient;
let withoutFilter: SchedulerClient;

const X86 = JSON.stringify({ arch: 'x86_64', vendor: 'Intel', topology: { sockets: 2, cores: 16, threads: 2 } });
const ARM = JSON.stringify({ arch: 'aarch64', vendor: 'ARM', topology: { sockets: 1, cores: 8, threads: 1 } });

beforeAll(async () => {
  cloud = await startRealCloud('sched_caps');
  // 4 big x86_64 hosts (the spread weighers prefer them) and 2 small aarch64 ones, over both cells
  await cloud.addHosts([
    ...Array.from({ length: 4 }, (_, i) => ({ host: `x86-${i}`, cell: i % 2, vcpus: 64, memoryMb: 262144, diskGb: 2000, cpuInfo: X86 })),
    ...Array.from({ length: 2 }, (_, i) => ({ host: `arm-${i}`, cell: i % 2, vcpus: 8, memoryMb: 16384, diskGb: 100, cpuInfo: ARM })),
  ]);
  withFilter = (await cloud.startReplica()).client;
  const others = DEFAULT_POLICY.enabledFilters.filter((f) => f !== 'ComputeCapabilitiesFilter');
  withoutFilter = (await cloud.startReplica({ enabledFilters: others })).client;
});
afterAll(async () => {
  await cloud.close();
});

const flavorWith = (extraSpecs: Record<string, string>) => ({
  id: 0,
  flavorid: 'arm',
  name: 'a1.small',
  vcpus: 1,
  memoryMb: 512,
  rootGb: 1,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs,
});

async function bootOn(client: SchedulerClient, extraSpecs: Record<string, string>, seed: number): Promise<string> {
  const r = await select(client, requestSpec({ flavor: flavorWith(extraSpecs), seed }), [randomUUID()]);
  if (!r.ok) throw r.err;
  return r.res.destinations[0]?.selections[0]?.serviceHost ?? '';
}

test('capabilities:cpu_info:arch=aarch64 lands on the aarch64 hosts only; without the filter the weighers pick an x86_64 host', async () => {
  const seeds = Array.from({ length: 6 }, (_, i) => 100 + i);
  const arm = await Promise.all(seeds.map((s) => bootOn(withFilter, { 'capabilities:cpu_info:arch': 'aarch64' }, s)));
  expect(arm.every((h) => h.startsWith('arm-'))).toBe(true);
  const ignored = await Promise.all(seeds.map((s) => bootOn(withoutFilter, { 'capabilities:cpu_info:arch': 'aarch64' }, s)));
  expect(ignored.every((h) => h.startsWith('x86-'))).toBe(true);
  // operators: a nested numeric key
  const big = await Promise.all(seeds.map((s) => bootOn(withFilter, { 'capabilities:cpu_info:topology:cores': '>= 16' }, s)));
  expect(big.every((h) => h.startsWith('x86-'))).toBe(true);
});

test('an architecture no compute reports is NoValidHost, and the diagnosis names ComputeCapabilitiesFilter', async () => {
  const r = await select(withFilter, requestSpec({ flavor: flavorWith({ 'capabilities:cpu_info:arch': 's== s390x' }), seed: 5 }), [
    randomUUID(),
  ]);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.err.failure?.code).toBe('scheduler.no_valid_host');
  expect(JSON.stringify(r.err.failure?.diagnosis)).toContain('ComputeCapabilitiesFilter');
});
