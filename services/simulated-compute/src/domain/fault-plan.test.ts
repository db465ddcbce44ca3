import { buildHangs, decideOutcome, faultPlanProblems, NO_FAULTS, seededRandom } from './fault-plan';
import { Guests, nameUuid, simulatedHosts } from './hosts';

test.each([
  [0.05, 'crash'],
  [0.15, 'abort'],
  [0.35, 'reschedule'],
  [0.6, 'succeed'],
] as const)('decideOutcome(%p) is %s', (draw, outcome) => {
  expect(decideOutcome({ rescheduleRate: 0.3, abortRate: 0.1, crashRate: 0.1, hang: false }, draw)).toBe(outcome);
});

test('no faults always succeed; the PRNG repeats by seed', () => {
  const r1 = seededRandom(42);
  const r2 = seededRandom(42);
  const a = Array.from({ length: 5 }, () => r1());
  const b = Array.from({ length: 5 }, () => r2());
  expect(a).toEqual(b);
  expect(a.every((x) => x >= 0 && x < 1)).toBe(true);
  expect(a.map((x) => decideOutcome(NO_FAULTS, x))).toEqual(Array(5).fill('succeed'));
});

test('faultPlanProblems lists every problem', () => {
  expect(faultPlanProblems({ rescheduleRate: 2, hang: 'yes', foo: 1 })).toEqual([
    'rescheduleRate must be a number in [0, 1]',
    'hang must be a boolean',
    'unknown field foo',
  ]);
  expect(faultPlanProblems({ abortRate: 0.5, hang: true })).toEqual([]);
});

test('hosts have stable uuids and guests are per attempt', () => {
  const [h1] = simulatedHosts('cell1', 'cmp-', 2);
  expect(h1).toEqual({ host: 'cmp-1', nodename: 'cmp-1', computeNodeUuid: nameUuid('cellsched:cell1:cmp-1'), arch: 'x86_64' });
  expect(nameUuid('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(() => simulatedHosts('c', 'h', 0)).toThrow(RangeError);
  const g = new Guests();
  g.add('h1', 'i1', 2);
  expect(g.has('h1', 'i1', 2)).toBe(true);
  expect(g.remove('h1', 'i1', 1)).toBe(false);
  expect(g.remove('h1', 'i1', 2)).toBe(true);
  expect(g.snapshot()).toEqual({});
});

test('a failing host fails every build reschedulably, whatever the draw; other hosts draw as usual', () => {
  const plan = { ...NO_FAULTS, failingHosts: ['bad-1'] };
  expect([0, 0.5, 0.999].map((d) => decideOutcome(plan, d, 'bad-1'))).toEqual(['reschedule', 'reschedule', 'reschedule']);
  expect(decideOutcome(plan, 0.5, 'good-1')).toBe('succeed');
  expect(faultPlanProblems({ failingHosts: ['a', 'b'] })).toEqual([]);
  expect(faultPlanProblems({ failingHosts: 'a' })).toEqual(['failingHosts must be a list of host names']);
});

test('a hanging host holds its builds, others build; hang holds every host', () => {
  const plan = { ...NO_FAULTS, hangingHosts: ['slow-1'] };
  expect([buildHangs(plan, 'slow-1'), buildHangs(plan, 'fast-1'), buildHangs({ ...NO_FAULTS, hang: true }, 'fast-1')]).toEqual([
    true,
    false,
    true,
  ]);
  expect(faultPlanProblems({ hangingHosts: ['a'] })).toEqual([]);
  expect(faultPlanProblems({ hangingHosts: [1] })).toEqual(['hangingHosts must be a list of host names']);
});

test('a host of another architecture', () => {
  const hosts = simulatedHosts('cell1', 'cmp-', 3, 1, 'x86_64', { 'cmp-3': 'aarch64' });
  expect(hosts.map((h) => h.arch)).toEqual(['x86_64', 'x86_64', 'aarch64']);
});
