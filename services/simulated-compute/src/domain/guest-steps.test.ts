import { decideStepOutcome, faultPlanProblems, NO_FAULTS, stepHangs, STEP_NAMES, type FaultPlan } from './fault-plan';
import { applyGuestEffect, guestEffectOf } from './guest-steps';
import { Guests, MOVE_GUEST_ATTEMPT } from './hosts';

const plan = (steps: FaultPlan['steps']): FaultPlan => ({ ...NO_FAULTS, steps });

test.each([
  // step, host, draw, outcome
  ['prep_resize', 'h1', 0.1, 'fail'],
  ['prep_resize', 'h2', 0.1, 'succeed'],
  ['prep_resize', 'h1', 0.9, 'succeed'],
  ['live_migration', 'h1', 0.05, 'crash'],
  ['live_migration', 'h1', 0.2, 'fail'],
  ['live_migration', 'h1', 0.5, 'succeed'],
  ['power_off', 'h9', 0.05, 'crash'],
] as const)("decideStepOutcome(%s on %s, draw %p) is %s: the step's own entry (and hosts) first, else *", (step, host, draw, outcome) => {
  const p = plan({ prep_resize: { failRate: 0.5, hosts: ['h1'] }, '*': { crashRate: 0.1, failRate: 0.2 } });
  expect(decideStepOutcome(p, step, host, draw)).toBe(outcome);
});

test('no step faults: every step succeeds; hang only where the plan says', () => {
  expect(STEP_NAMES.map((s) => decideStepOutcome(NO_FAULTS, s, 'h', 0))).toEqual(STEP_NAMES.map(() => 'succeed'));
  const p = plan({ finish_resize: { hang: true, hosts: ['d1'] } });
  expect([
    stepHangs(p, 'finish_resize', 'd1'),
    stepHangs(p, 'finish_resize', 'd2'),
    stepHangs(p, 'prep_resize', 'd1'),
    stepHangs(NO_FAULTS, 'x', 'd1'),
  ]).toEqual([true, false, false, false]);
});

test('faultPlanProblems checks the steps map whole', () => {
  expect(faultPlanProblems({ steps: { prep_resize: { failRate: 1, hosts: ['a'] }, '*': { hang: false } } })).toEqual([]);
  expect(faultPlanProblems({ steps: { bogus: {}, prep_resize: { failRate: 2, hang: 'y', hosts: [1], x: 1 }, power_off: 3 } })).toEqual([
    'steps: unknown step bogus',
    'steps.prep_resize.failRate must be a number in [0, 1]',
    'steps.prep_resize.hang must be a boolean',
    'steps.prep_resize.hosts must be a list of host names',
    'steps.prep_resize: unknown field x',
    'steps.power_off must be an object',
  ]);
  expect(faultPlanProblems({ steps: [] })).toEqual(['steps must be an object of step name (or *) → faults']);
});

test('every step of the proto has an effect, and effects are idempotent states', () => {
  expect(STEP_NAMES.filter((s) => guestEffectOf(s) === undefined)).toEqual([]);
  expect(guestEffectOf('bogus')).toBeUndefined();
  const g = new Guests();
  const run = (host: string, step: string): void => applyGuestEffect(g, host, 'i1', guestEffectOf(step) ?? { kind: 'none' });
  g.add('src', 'i1', 3);
  run('d1', 'prep_resize');
  expect(g.snapshot()).toEqual({ src: ['i1'] });
  run('src', 'resize_instance');
  run('src', 'resize_instance');
  expect(g.get('src', 'i1')).toEqual({ attempt: 3, power: 'shutdown' });
  run('d1', 'finish_resize');
  run('d1', 'finish_resize');
  expect(g.get('d1', 'i1')).toEqual({ attempt: MOVE_GUEST_ATTEMPT, power: 'running' });
  expect(g.stats.spawned).toBe(2);
  run('src', 'confirm_resize');
  run('src', 'confirm_resize');
  expect(g.snapshot()).toEqual({ d1: ['i1'] });
  expect(g.remove('d1', 'i1', 1)).toBe(true); // any terminate removes a move's guest
});

test("a live migration's destination guest notes the block_migration it was asked with, and keeps it", () => {
  const g = new Guests();
  const run = (host: string, step: string, bm: string): void =>
    applyGuestEffect(g, host, 'i1', guestEffectOf(step) ?? { kind: 'none' }, bm);
  g.add('src', 'i1', 1);
  run('d1', 'pre_live_migration', 'true');
  run('src', 'live_migration', 'true');
  run('src', 'post_live_migration', 'true');
  expect(g.details()).toEqual({ d1: { i1: { attempt: MOVE_GUEST_ATTEMPT, power: 'running', blockMigration: 'true' } } });
  run('d1', 'power_off', '');
  expect(g.get('d1', 'i1')).toEqual({ attempt: MOVE_GUEST_ATTEMPT, power: 'shutdown', blockMigration: 'true' });
  // any other step places its guest without one
  run('d2', 'unshelve', '');
  expect(g.get('d2', 'i1')).toEqual({ attempt: MOVE_GUEST_ATTEMPT, power: 'running' });
});

test('a step on a host that lost its guest (a restarted process) adopts it', () => {
  const g = new Guests();
  applyGuestEffect(g, 'h', 'i1', guestEffectOf('power_off') ?? { kind: 'none' });
  expect(g.get('h', 'i1')).toEqual({ attempt: MOVE_GUEST_ATTEMPT, power: 'shutdown' });
  applyGuestEffect(g, 'h', 'i1', guestEffectOf('power_on') ?? { kind: 'none' });
  expect(g.get('h', 'i1')?.power).toBe('running');
});
