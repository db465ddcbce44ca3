// The move-aware invariants' pure core (move-model.ts): what placement, the migrations and the
// computes' guests must look like at quiescence.
import {
  consumerProblems,
  describeConsumer,
  expectedHoldings,
  guestProblems,
  holdsOnHost,
  migrationProblems,
  providerProblems,
  unsettled,
  type InstanceFacts,
  type MigrationFacts,
  type SourceBack,
} from './move-model';
import { pickStep } from './mover';

const TINY = { vcpus: 1, memoryMb: 512, rootGb: 1 };
const SMALL = { vcpus: 1, memoryMb: 2048, rootGb: 20 };
const R_TINY: Record<string, number> = { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 };
const R_SMALL: Record<string, number> = { VCPU: 1, MEMORY_MB: 2048, DISK_GB: 20 };

const inst = (uuid: string, vmState: string, host: string | null, o: Partial<InstanceFacts> = {}): InstanceFacts => ({
  uuid,
  cell: 'cell1',
  vmState,
  taskState: null,
  host,
  node: host,
  flavor: TINY,
  oldFlavor: null,
  launched: vmState !== 'error',
  deleted: false,
  ...o,
});
const mig = (
  uuid: string,
  instanceUuid: string,
  type: string,
  status: string,
  source: string,
  dest: string,
  o: Partial<MigrationFacts> = {},
): MigrationFacts => ({
  uuid,
  cell: 'cell1',
  instanceUuid,
  type,
  status,
  sourceCompute: source,
  sourceNode: source,
  destCompute: dest,
  destNode: dest,
  createdAt: 0,
  deleted: false,
  ...o,
});
const allocs = (entries: [string, [string, Record<string, number>][]][]): Map<string, Map<string, Record<string, number>>> =>
  new Map(entries.map(([c, ps]) => [c, new Map(ps)]));
const allUp: SourceBack = () => true;
const downHosts =
  (...down: string[]): SourceBack =>
  (h) =>
    h !== null && !down.includes(h);
const byId = (is: InstanceFacts[]): Map<string, InstanceFacts> => new Map(is.map((i) => [i.uuid, i]));

describe('what holds resources', () => {
  test.each([
    ['active', true],
    ['stopped', true],
    ['resized', true],
    ['shelved', true],
    ['shelved_offloaded', false],
    ['building', false],
    ['deleted', false],
  ])('%s on a host: %s', (vmState, holds) => {
    expect(holdsOnHost(inst('i', vmState, vmState === 'shelved_offloaded' ? null : 'h1'))).toBe(holds);
  });

  test('ERROR holds only once launched (a failed move or rebuild left it on its host; a failed build holds nothing)', () => {
    expect(holdsOnHost(inst('i', 'error', 'h1', { launched: false }))).toBe(false);
    expect(holdsOnHost(inst('i', 'error', 'h1', { launched: true }))).toBe(true);
    expect(holdsOnHost(inst('i', 'error', null, { launched: true }))).toBe(false);
    expect(holdsOnHost(inst('i', 'active', 'h1', { deleted: true }))).toBe(false);
  });
});

describe('allocations-exact with moves', () => {
  const describeNone = (): string => 'nothing';

  test('boot-only rules stand: ACTIVE exact, a failed build and a deleted instance hold nothing', () => {
    const is = [inst('a', 'active', 'h1'), inst('e', 'error', 'h2', { launched: false }), inst('d', 'active', 'h1', { deleted: true })];
    const exp = expectedHoldings(is, [], allUp);
    expect([...exp.keys()]).toEqual(['a']);
    expect(consumerProblems(exp, allocs([['a', [['h1', R_TINY]]]]), new Set(), describeNone)).toEqual([]);
    expect(
      consumerProblems(
        exp,
        allocs([
          ['a', [['h1', R_TINY]]],
          ['e', [['h2', R_TINY]]],
          ['d', [['h1', R_TINY]]],
        ]),
        new Set(),
        describeNone,
      ),
    ).toEqual(['e: allocation on h2 but nothing (leaked)', 'd: allocation on h1 but nothing (leaked)']);
    expect(consumerProblems(exp, allocs([]), new Set(), describeNone)).toEqual(['a: instance active on h1 with no allocation (missing)']);
    expect(
      consumerProblems(
        exp,
        allocs([
          [
            'a',
            [
              ['h1', R_TINY],
              ['h2', R_TINY],
            ],
          ],
        ]),
        new Set(),
        describeNone,
      ),
    ).toEqual(['a: instance active on h1 but also allocated on h2']);
  });

  test('VERIFY_RESIZE: the instance holds the new flavor on the destination, the finished migration the old one on the source', () => {
    const i = inst('i', 'resized', 'h2', { flavor: SMALL, oldFlavor: TINY });
    const m = mig('m', 'i', 'resize', 'finished', 'h1', 'h2');
    const exp = expectedHoldings([i], [m], allUp);
    const good = allocs([
      ['i', [['h2', R_SMALL]]],
      ['m', [['h1', R_TINY]]],
    ]);
    expect(consumerProblems(exp, good, new Set(), describeNone)).toEqual([]);
    expect(
      providerProblems(
        exp,
        new Map([
          ['h1', R_TINY],
          ['h2', R_SMALL],
          ['h3', {}],
        ]),
      ),
    ).toEqual([]);
    // the migration holding the new flavor, or nothing at all, is wrong
    expect(
      consumerProblems(
        exp,
        allocs([
          ['i', [['h2', R_SMALL]]],
          ['m', [['h1', R_SMALL]]],
        ]),
        new Set(),
        describeNone,
      ),
    ).toEqual(['m: resize finished of i (source h1): allocation on h1 VCPU=1,MEMORY_MB=2048,DISK_GB=20 ≠ VCPU=1,MEMORY_MB=512,DISK_GB=1']);
    expect(consumerProblems(exp, allocs([['i', [['h2', R_SMALL]]]]), new Set(), describeNone)).toEqual([
      'm: resize finished of i (source h1) with no allocation (missing)',
    ]);
    expect(
      providerProblems(
        exp,
        new Map([
          ['h1', {}],
          ['h2', R_SMALL],
        ]),
      ),
    ).toEqual(["provider h1: usages none ≠ its instances' and migrations' VCPU=1,MEMORY_MB=512,DISK_GB=1"]);
  });

  test('a migrate (no flavor change, no old_flavor recorded) holds the current flavor on the source', () => {
    const exp = expectedHoldings([inst('i', 'resized', 'h2')], [mig('m', 'i', 'migration', 'finished', 'h1', 'h2')], allUp);
    expect(exp.get('m')?.providers).toEqual(new Map([['h1', R_TINY]]));
  });

  test('a migration in a final state holds nothing: its allocation is a leak, described as such', () => {
    const i = inst('i', 'active', 'h2', { flavor: SMALL });
    const ms = ['confirmed', 'reverted', 'completed', 'error', 'failed'].map((st, n) => mig(`m${n}`, 'i', 'resize', st, 'h1', 'h2'));
    const exp = expectedHoldings([i], ms, allUp);
    expect([...exp.keys()]).toEqual(['i']);
    const got = allocs([
      ['i', [['h2', R_SMALL]]],
      ['m0', [['h1', R_TINY]]],
    ]);
    const describe = (c: string): string => describeConsumer(c, byId([i]), new Map(ms.map((m) => [m.uuid, m])), new Set(['i']));
    expect(consumerProblems(exp, got, new Set(), describe)).toEqual([
      'm0: allocation on h1 but it is the resize confirmed of i (active), which holds nothing (leaked)',
    ]);
  });

  test('a finished migration of an instance no longer in VERIFY_RESIZE (or deleted) holds nothing', () => {
    const m = mig('m', 'i', 'resize', 'finished', 'h1', 'h2');
    expect(expectedHoldings([inst('i', 'active', 'h2')], [m], allUp).has('m')).toBe(false);
    expect(expectedHoldings([inst('i', 'resized', 'h2', { deleted: true })], [m], allUp).size).toBe(0);
  });

  test('evacuation done: the migration holds the source while it is not back, nothing once it is', () => {
    const i = inst('i', 'active', 'h2');
    const m = mig('m', 'i', 'evacuation', 'done', 'h1', 'h2');
    expect(expectedHoldings([i], [m], downHosts('h1')).get('m')?.providers).toEqual(new Map([['h1', R_TINY]]));
    expect(expectedHoldings([i], [m], allUp).has('m')).toBe(false);
    expect(expectedHoldings([i], [{ ...m, status: 'completed' }], downHosts('h1')).has('m')).toBe(false);
  });

  test('SHUTOFF holds, SHELVED_OFFLOADED holds nothing; consumers still settling are not judged', () => {
    const is = [inst('s', 'stopped', 'h1'), inst('o', 'shelved_offloaded', null)];
    const exp = expectedHoldings(is, [], allUp);
    expect([...exp.keys()]).toEqual(['s']);
    expect(
      consumerProblems(
        exp,
        allocs([
          ['s', [['h1', R_TINY]]],
          ['o', [['h1', R_TINY]]],
        ]),
        new Set(['o']),
        describeNone,
      ),
    ).toEqual([]);
    expect(consumerProblems(exp, allocs([['o', [['h1', R_TINY]]]]), new Set(['s']), describeNone)).toEqual([
      'o: allocation on h1 but nothing (leaked)',
    ]);
  });

  test('per provider: the instances and the migrations on it add up', () => {
    const is = [inst('a', 'active', 'h1'), inst('b', 'resized', 'h2', { flavor: SMALL, oldFlavor: TINY })];
    const exp = expectedHoldings(is, [mig('m', 'b', 'resize', 'finished', 'h1', 'h2')], allUp);
    expect(
      providerProblems(
        exp,
        new Map([
          ['h1', { VCPU: 2, MEMORY_MB: 1024, DISK_GB: 2 }],
          ['h2', R_SMALL],
        ]),
      ),
    ).toEqual([]);
    expect(
      providerProblems(
        exp,
        new Map([
          ['h1', R_TINY],
          ['h2', R_SMALL],
        ]),
      ),
    ).toHaveLength(1);
  });
});

describe('migrations-final', () => {
  test('final, VERIFY_RESIZE-finished and done-with-source-down pass; anything in progress fails', () => {
    const is = byId([inst('a', 'active', 'h2'), inst('b', 'resized', 'h2'), inst('c', 'active', 'h3'), inst('d', 'active', 'h1')]);
    const ms = [
      mig('m1', 'a', 'live-migration', 'completed', 'h1', 'h2'),
      mig('m2', 'b', 'resize', 'finished', 'h1', 'h2'),
      mig('m3', 'c', 'evacuation', 'done', 'h9', 'h3'),
      mig('m4', 'd', 'migration', 'migrating', 'h1', 'h2'),
    ];
    expect(migrationProblems(ms, is, downHosts('h9'), 60)).toEqual([
      'm4 (migration of d, h1 → h2): left migrating 60 s after the scenario',
    ]);
    expect(migrationProblems(ms.slice(0, 3), is, allUp, 60)).toEqual([
      'm3 (evacuation of c, h9 → h3): done but its source h9 is back and it is not completed 60 s after the scenario',
    ]);
  });

  test("finished while the instance is not VERIFY_RESIZE; a deleted instance's open migration unless soft-deleted; two open at once", () => {
    const is = byId([inst('a', 'active', 'h2'), inst('b', 'resized', 'h2')]);
    expect(migrationProblems([mig('m', 'a', 'resize', 'finished', 'h1', 'h2')], is, allUp, 60)).toEqual([
      'm (resize of a, h1 → h2): finished but the instance is active, not VERIFY_RESIZE',
    ]);
    expect(migrationProblems([mig('m', 'gone', 'resize', 'migrating', 'h1', 'h2')], is, allUp, 60)).toEqual([
      'm (resize of gone, h1 → h2): left migrating though its instance is deleted',
    ]);
    expect(migrationProblems([mig('m', 'gone', 'resize', 'migrating', 'h1', 'h2', { deleted: true })], is, allUp, 60)).toEqual([]);
    const two = migrationProblems(
      [mig('m1', 'b', 'resize', 'finished', 'h1', 'h2'), mig('m2', 'b', 'migration', 'pre-migrating', 'h2', 'h3')],
      is,
      allUp,
      60,
    );
    expect(two).toEqual([
      'm2 (migration of b, h2 → h3): left pre-migrating 60 s after the scenario',
      'b: 2 migrations not final at once (resize finished, migration pre-migrating)',
    ]);
  });
});

describe("single-host from the computes' guests", () => {
  const g = (host: string, uuid: string): { host: string; uuid: string } => ({ host, uuid });

  test("a guest on its instance's host is fine whether ACTIVE, SHUTOFF or VERIFY_RESIZE; the resize source keeps the old guest until confirm", () => {
    const is = byId([inst('a', 'active', 'h1'), inst('s', 'stopped', 'h1'), inst('r', 'resized', 'h2')]);
    const ms = [mig('m', 'r', 'resize', 'finished', 'h1', 'h2')];
    expect(guestProblems([g('h1', 'a'), g('h1', 's'), g('h2', 'r'), g('h1', 'r')], is, ms, allUp, new Set())).toEqual([]);
    // confirmed: the source's copy must be gone
    expect(
      guestProblems(
        [g('h2', 'r'), g('h1', 'r')],
        byId([inst('r', 'active', 'h2')]),
        [{ ...(ms[0] as MigrationFacts), status: 'confirmed' }],
        allUp,
        new Set(),
      ),
    ).toEqual(["r: runs on h2 and h1 (computes' guests) but the instance is active on h2"]);
  });

  test("ghosts: a deleted, offloaded or never-launched instance's guest, a guest elsewhere; skipped while settling", () => {
    const is = byId([inst('o', 'shelved_offloaded', null), inst('e', 'error', 'h1', { launched: false }), inst('a', 'active', 'h1')]);
    expect(guestProblems([g('h1', 'o'), g('h1', 'e'), g('h2', 'a'), g('h1', 'x')], is, [], allUp, new Set())).toEqual([
      "o: runs on h1 (compute's guests) but the instance is shelved_offloaded on -",
      "e: runs on h1 (compute's guests) but the instance is error on h1",
      "a: runs on h2 (compute's guests) but the instance is active on h1",
      "x: runs on h1 (compute's guests) but the instance is deleted or absent",
    ]);
    expect(guestProblems([g('h2', 'a')], is, [], allUp, new Set(['a']))).toEqual([]);
  });

  test("an evacuated instance's copy on its source is tolerated while the source is not back, a ghost once it is", () => {
    const is = byId([inst('v', 'active', 'h2')]);
    const ms = [mig('m', 'v', 'evacuation', 'done', 'h1', 'h2')];
    expect(guestProblems([g('h2', 'v'), g('h1', 'v')], is, ms, downHosts('h1'), new Set())).toEqual([]);
    expect(guestProblems([g('h2', 'v'), g('h1', 'v')], is, ms, allUp, new Set())).toHaveLength(1);
    expect(
      guestProblems([g('h2', 'v'), g('h1', 'v')], is, [{ ...(ms[0] as MigrationFacts), status: 'completed' }], downHosts('h1'), new Set()),
    ).toHaveLength(1);
  });
});

test('a server is at rest only in a resting status with no task_state', () => {
  expect(unsettled({ status: 'ACTIVE', 'OS-EXT-STS:task_state': null })).toBeUndefined();
  expect(unsettled({ status: 'VERIFY_RESIZE' })).toBeUndefined();
  expect(unsettled({ status: 'SHUTOFF', 'OS-EXT-STS:task_state': null })).toBeUndefined();
  expect(unsettled({ status: 'SHELVED_OFFLOADED', 'OS-EXT-STS:task_state': null })).toBeUndefined();
  expect(unsettled({ status: 'BUILD', 'OS-EXT-STS:task_state': 'spawning' })).toBe('BUILD/spawning');
  expect(unsettled({ status: 'RESIZE', 'OS-EXT-STS:task_state': 'resize_migrating' })).toBe('RESIZE/resize_migrating');
  expect(unsettled({ status: 'ACTIVE', 'OS-EXT-STS:task_state': 'powering-off' })).toBe('ACTIVE/powering-off');
  expect(unsettled({ status: 'MIGRATING' })).toBe('MIGRATING');
});

describe('the mover picks what a state allows', () => {
  const rng = (x: number): { next: () => number } => ({ next: () => x });
  test.each([
    ['ACTIVE', ['migrate', 'resize', 'os-migrateLive', 'os-stop', 'reboot', 'rebuild', 'shelve', 'delete']],
    ['SHUTOFF', ['os-start', 'migrate', 'resize', 'shelve', 'delete']],
    ['VERIFY_RESIZE', ['confirmResize', 'revertResize', 'delete']],
    ['SHELVED_OFFLOADED', ['unshelve', 'delete']],
    ['ERROR', ['delete']],
  ])('%s: %j', (status, allowed) => {
    const seen = new Set<string>();
    for (let x = 0; x < 1; x += 0.01) seen.add(pickStep(status, null, 'm1.tiny', rng(x))?.action ?? 'none');
    expect([...seen].sort()).toEqual([...allowed].sort());
  });

  test('nothing for a busy server (task_state, BUILD, RESIZE, MIGRATING); a resize always changes flavor', () => {
    expect(pickStep('ACTIVE', 'powering-off', 'm1.tiny', rng(0))).toBeUndefined();
    for (const s of ['BUILD', 'RESIZE', 'MIGRATING', 'REBUILD', 'REVERT_RESIZE'])
      expect(pickStep(s, null, 'm1.tiny', rng(0))).toBeUndefined();
    const resizeAt = (f: string): unknown => {
      for (let x = 0; x < 1; x += 0.01) {
        const st = pickStep('ACTIVE', null, f, rng(x));
        if (st?.action === 'resize') return st.args;
      }
      return undefined;
    };
    expect(resizeAt('m1.tiny')).toEqual({ flavorRef: '2' });
    expect(resizeAt('m1.small')).toEqual({ flavorRef: '1' });
  });
});
