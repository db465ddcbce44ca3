import type { ComputeNodeRecord } from '../host-state';
import { ctx, flavor, hostState, spec } from '../../../test/support/fixtures';
import { capability, capabilitySpecs, computeCapabilitiesFilter } from './compute-capabilities-filter';

const CPU_INFO = {
  arch: 'aarch64',
  vendor: 'ARM',
  topology: { sockets: 2, cores: 32 },
  features: ['sve', 'aes'],
  maxphysaddr: { bits: 48 },
};
const host = (rec: Partial<ComputeNodeRecord> = {}) =>
  hostState({
    hypervisorType: 'QEMU',
    hypervisorVersion: 8002000,
    vcpus: 64,
    vcpusUsed: 10,
    memoryMb: 131072,
    memoryMbUsed: 31072,
    localGb: 1000,
    localGbUsed: 100,
    numIoOps: 2,
    stats: { num_instances: '7', io_workload: '2', gpu_vendor: 'nvidia', json_stat: '{"x": "1"}' },
    cpuInfo: CPU_INFO,
    ...rec,
  });

describe('ComputeCapabilitiesFilter', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['no extra specs', {}, true],
    ['other scopes are not its business', { 'hw:cpu_policy': 'dedicated', 'resources:VCPU': '2', 'trait:X': 'required' }, true],
    ['cpu_info nested key, exact', { 'capabilities:cpu_info:arch': 'aarch64' }, true],
    ['cpu_info nested key, mismatched', { 'capabilities:cpu_info:arch': 'x86_64' }, false],
    ['cpu_info nested key, s==', { 'capabilities:cpu_info:vendor': 's== ARM' }, true],
    ['cpu_info two levels deep, numeric', { 'capabilities:cpu_info:topology:cores': '>= 16' }, true],
    ['cpu_info two levels deep, too few', { 'capabilities:cpu_info:topology:sockets': '>= 4' }, false],
    ["cpu_info list: <in> reads Python's repr", { 'capabilities:cpu_info:features': '<in> sve' }, true],
    ['cpu_info key missing fails', { 'capabilities:cpu_info:model': 'Neoverse' }, false],
    ['past a scalar there are no keys', { 'capabilities:cpu_info:arch:bits': '64' }, false],
    ['hypervisor_type with <or>', { 'capabilities:hypervisor_type': '<or> kvm <or> QEMU' }, true],
    ['hypervisor_version at least', { 'capabilities:hypervisor_version': '>= 8000000' }, true],
    ['vcpus_total "=" means at least', { 'capabilities:vcpus_total': '= 32' }, true],
    ['free_ram_mb too small', { 'capabilities:free_ram_mb': '>= 200000' }, false],
    ['free_ram_mb enough', { 'capabilities:free_ram_mb': '>= 100000' }, true],
    ['free_disk_mb', { 'capabilities:free_disk_mb': '>= 921600' }, true],
    ['num_instances from stats', { 'capabilities:num_instances': '<= 5' }, false],
    ['a stats key by name', { 'capabilities:gpu_vendor': 's== nvidia' }, true],
    ['a stats key that is JSON, nested', { 'capabilities:json_stat:x': '1' }, true],
    ['unknown capability fails', { 'capabilities:no_such_thing': 'x' }, false],
    ['unscoped attribute counts (as in Nova)', { hypervisor_type: 'xen' }, false],
    ['unscoped stat counts (as in Nova)', { gpu_vendor: 'nvidia' }, true],
    ['unscoped key the host lacks is ignored', { group_policy: 'isolate', no_such_thing: 'x' }, true],
    ['an Object.prototype name is no attribute', { constructor: 'x', 'capabilities:toString': 'x' }, false],
    ['hw:maxphysaddr_bits: the host has at least that many', { 'hw:maxphysaddr_bits': '46' }, true],
    ['hw:maxphysaddr_bits: the host has fewer', { 'hw:maxphysaddr_bits': '52' }, false],
    ['every spec must match', { 'capabilities:cpu_info:arch': 'aarch64', 'capabilities:hypervisor_type': 'kvm' }, false],
  ])('%s', (_n, extraSpecs, pass) => {
    const c = ctx({ spec: spec({ flavor: flavor({ extraSpecs }) }) });
    expect(computeCapabilitiesFilter.hostPasses(host(), c).pass).toBe(pass);
    // the pipeline's per-pass form answers the same, reason included
    expect(computeCapabilitiesFilter.forRequest?.(c)(host())).toEqual(computeCapabilitiesFilter.hostPasses(host(), c));
  });

  it('a host whose compute reported no cpu_info fails a cpu_info spec', () => {
    const c = ctx({ spec: spec({ flavor: flavor({ extraSpecs: { 'capabilities:cpu_info:arch': 'aarch64' } }) }) });
    const r = computeCapabilitiesFilter.hostPasses(host({ cpuInfo: {} }), c);
    expect(r).toEqual({ pass: false, reason: 'host has no capability cpu_info:arch' });
  });

  it('the reason names the capability and the requirement', () => {
    const c = ctx({ spec: spec({ flavor: flavor({ extraSpecs: { 'capabilities:cpu_info:arch': 'x86_64' } }) }) });
    expect(computeCapabilitiesFilter.hostPasses(host(), c)).toEqual({
      pass: false,
      reason: 'capability cpu_info:arch does not match "x86_64"',
    });
  });

  it.each<[string[], unknown]>([
    [['hypervisor_version'], 8002000],
    [['num_io_ops'], 2],
    [['io_workload'], '2'],
    [['cpu_info', 'topology', 'sockets'], 2],
    [['cpu_info', 'nope'], undefined],
    [[], undefined],
  ])('capability %j', (scope, expected) => {
    expect(capability(host(), scope)).toEqual(expected);
  });

  it('reads the flavor once: other scopes dropped, hw:maxphysaddr_bits rewritten, sorted by key', () => {
    expect(
      capabilitySpecs({
        'hw:maxphysaddr_bits': '46',
        'hw:cpu_policy': 'dedicated',
        'capabilities:cpu_info:arch': 'aarch64',
        gpu_vendor: 'nvidia',
      }),
    ).toEqual([
      { scope: ['cpu_info', 'arch'], req: 'aarch64', unscoped: false },
      { scope: ['cpu_info', 'maxphysaddr', 'bits'], req: '>= 46', unscoped: false },
      { scope: ['gpu_vendor'], req: 'nvidia', unscoped: true },
    ]);
  });
});
