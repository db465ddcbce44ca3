import type { Failure } from '@cellsched/wire';
import { mayBeInACell, noValidHostFault, numAlternates, planBuild, type MappingState } from './build-plan';

const makeFailure = (code: string, message: string, extra: Partial<Failure> = {}): Failure => ({
  code,
  message,
  retryable: false,
  expected: true,
  metadata: {},
  diagnosis: [],
  ...extra,
});

const m = (instanceUuid: string, over: Partial<MappingState> = {}): MappingState => ({
  instanceUuid,
  exists: true,
  cellUuid: undefined,
  queuedForDelete: false,
  ...over,
});

test.each([
  [1, 0],
  [3, 2],
  [5, 4],
  [0, 0],
])('max_attempts %i asks for %i alternates', (max, alt) => {
  expect(numAlternates(max)).toBe(alt);
});

test('fresh instances are scheduled, placed ones resumed, deleted ones skipped', () => {
  const plan = planBuild(
    [m('a'), m('b', { cellUuid: 'c1' }), m('c'), m('d', { exists: false }), m('e', { queuedForDelete: true })],
    new Map([['c', 'c2']]),
  );
  expect(plan.toSchedule).toEqual(['a']);
  expect(plan.resume).toEqual([
    { instanceUuid: 'b', cellUuid: 'c1' },
    { instanceUuid: 'c', cellUuid: 'c2' },
  ]);
  expect(plan.skipped.map((s) => s.instanceUuid)).toEqual(['d', 'e']);
});

test.each([
  // redelivered, recast, sender's version: may the instances already be in a cell?
  [false, false, '1.5', false],
  [false, false, '1.12', false],
  [false, false, '2.0', false],
  [true, false, '1.5', true],
  [false, true, '1.5', true],
  [false, false, '1.4', true],
  [false, false, '', true],
  [false, false, 'junk', true],
])('redelivered %s, recast %s, sender %s: look in every cell %s', (redelivered, recast, rpcVersion, expected) => {
  expect(mayBeInACell({ redelivered, recast, rpcVersion })).toBe(expected);
});

test('a queued-for-delete instance already in a cell is resumed (the cell copy gets cleaned up there)', () => {
  expect(planBuild([m('a', { cellUuid: 'c1', queuedForDelete: true })], new Map()).resume).toHaveLength(1);
});

test('the NoValidHost fault carries the per-filter diagnosis', () => {
  const f = makeFailure('scheduler.no_valid_host', 'No valid host was found. There are not enough hosts available.', {
    diagnosis: [
      { filter: 'ComputeFilter', hostsBefore: 4, hostsAfter: 2, reason: '' },
      { filter: 'placement', hostsBefore: 2, hostsAfter: 0, reason: 'no host has 9999 VCPU' },
    ],
  });
  const fault = noValidHostFault(f);
  expect(fault.message).toBe('No valid host was found. There are not enough hosts available.');
  expect(fault.details).toContain('ComputeFilter: 4 -> 2 hosts');
  expect(fault.details).toContain('placement: 2 -> 0 hosts (no host has 9999 VCPU)');
  expect(noValidHostFault(makeFailure('scheduler.no_valid_host', 'boom')).message).toBe('No valid host was found. boom');
});
