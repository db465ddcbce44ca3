import { AllocationRequestError, instanceConsumer, parseAllocationRequest } from './allocation-request';
import { computeNodeInventory, withDisabledTrait } from './inventory';

const RP = '4e8e5957-649f-477b-9e5b-f1f75b21c03c';

test.each([
  ['not json', '{'],
  ['no allocations', '{"mappings": {}}'],
  ['empty allocations', '{"allocations": {}}'],
  ['no resources', `{"allocations": {"${RP}": {}}}`],
  ['zero amount', `{"allocations": {"${RP}": {"resources": {"VCPU": 0}}}}`],
  ['fraction', `{"allocations": {"${RP}": {"resources": {"VCPU": 1.5}}}}`],
])('parseAllocationRequest refuses %s', (_name, json) => {
  expect(() => parseAllocationRequest(json)).toThrow(AllocationRequestError);
});

test('parseAllocationRequest reads the scheduler shape and instanceConsumer wraps it', () => {
  const allocations = parseAllocationRequest(
    `{"allocations": {"${RP}": {"resources": {"VCPU": 2, "MEMORY_MB": 512}}}, "mappings": {"": ["${RP}"]}}`,
  );
  expect(allocations).toEqual([{ resourceProviderUuid: RP, resources: { VCPU: 2, MEMORY_MB: 512 } }]);
  expect(instanceConsumer({ uuid: 'i', projectId: 'p', userId: 'u' }, allocations)).toEqual({
    consumerUuid: 'i',
    projectId: 'p',
    userId: 'u',
    consumerType: 'INSTANCE',
    allocations,
  });
});

test('computeNodeInventory follows Nova defaults (reserved memory 512, ratios 4/1/1, disk MB rounded up)', () => {
  const inv = computeNodeInventory({ vcpus: 8, memoryMb: 16384, localGb: 100, reservedHostDiskMb: 1500 });
  expect(inv.VCPU).toEqual({ total: 8, reserved: 0, min_unit: 1, max_unit: 8, step_size: 1, allocation_ratio: 4 });
  expect(inv.MEMORY_MB).toMatchObject({ total: 16384, reserved: 512, allocation_ratio: 1 });
  expect(inv.DISK_GB).toMatchObject({ total: 100, reserved: 2, max_unit: 100 });
  expect(Object.keys(computeNodeInventory({ vcpus: 2, memoryMb: 1024, localGb: 0 }))).toEqual(['VCPU', 'MEMORY_MB']);
  expect(() => computeNodeInventory({ vcpus: -1, memoryMb: 1, localGb: 1 })).toThrow(RangeError);
  expect(() => computeNodeInventory({ vcpus: 1, memoryMb: 1, localGb: 1, cpuAllocationRatio: 0 })).toThrow(RangeError);
});

test('withDisabledTrait adds and removes COMPUTE_STATUS_DISABLED only', () => {
  expect(withDisabledTrait(['HW_CPU_X86_AVX2'], true)).toEqual(['COMPUTE_STATUS_DISABLED', 'HW_CPU_X86_AVX2']);
  expect(withDisabledTrait(['COMPUTE_STATUS_DISABLED', 'HW_CPU_X86_AVX2'], false)).toEqual(['HW_CPU_X86_AVX2']);
});
