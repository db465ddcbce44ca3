/**
 * The action flows under at-least-once delivery and failures that are not a compute's answer:
 * redelivered casts and results, late results of an abandoned attempt, refused actions, casts the
 * broker refuses, the step watchdog, deletes during a move, the auto-confirm.
 */
import { FakeActionCell, INSTANCE, MEDIUM, MIGRATION, sel } from '../../test/unit/fake-action-cell';
import { autoConfirmResizes, cleanDeletedInstancesMoves, runStepWatchdog } from './action-passes';

const silent = { info: () => undefined, warn: () => undefined };
const resizing = (): FakeActionCell => {
  const cell = new FakeActionCell({ taskState: 'resize_prep' }).withMigration('resize', 'pre-migrating', 'd1');
  cell.fits = ['d2'];
  return cell;
};
const resize = (cell: FakeActionCell): Promise<void> =>
  cell.act({ action: 'resize', migrationUuid: MIGRATION, hostList: [sel('d1'), sel('d2')], newFlavor: MEDIUM });

describe('redelivery', () => {
  test('a redelivered instance_action while its first step is in flight re-sends that step and records nothing more', async () => {
    const cell = resizing();
    await resize(cell);
    await resize(cell);
    expect(cell.casts.map((c) => `${c.step}@${c.host}#${c.attempt}`)).toEqual(['prep_resize@d1#1', 'prep_resize@d1#1']);
    expect(cell.log.filter((l) => l.startsWith('claim'))).toEqual([]);
    expect(cell.events).toEqual([]);
  });

  test('a redelivered instance_action after the action moved on or ended changes nothing', async () => {
    const cell = new FakeActionCell({ taskState: 'powering-off' });
    await cell.act({ action: 'stop' });
    await cell.drive();
    await cell.act({ action: 'stop' });
    expect(cell.casts).toHaveLength(1);
    expect(cell.state()).toBe('stopped/- on src m1.small [inst@src]');
  });

  test('a redelivered result re-sends the step it advanced to (its cast may have been lost); a third copy of an older one changes nothing', async () => {
    const cell = resizing();
    await resize(cell);
    const prep = cell.casts[0] as (typeof cell.casts)[number];
    await cell.report(prep, 'ok');
    await cell.report(prep, 'ok');
    expect(cell.casts.map((c) => `${c.step}@${c.host}`)).toEqual(['prep_resize@d1', 'resize_instance@src', 'resize_instance@src']);
    await cell.report(cell.casts[1] as (typeof cell.casts)[number], 'ok');
    await cell.report(prep, 'ok');
    expect(cell.casts.map((c) => c.step)).toEqual(['prep_resize', 'resize_instance', 'resize_instance', 'finish_resize']);
    expect(cell.events).toEqual(['compute_prep_resize d1 ok', 'compute_resize_instance src ok']);
  });

  test('a late success of an abandoned destination changes nothing, and a guest it left there is terminated', async () => {
    const cell = new FakeActionCell({ vmState: 'shelved_offloaded', taskState: 'unshelving', host: null, node: null });
    cell.alloc.set(INSTANCE, 'd1');
    cell.fits = ['d2'];
    await cell.act({ action: 'unshelve', hostList: [sel('d1'), sel('d2')] });
    const first = cell.casts[0] as (typeof cell.casts)[number];
    await cell.report(first, 'fail');
    await cell.report(first, 'ok');
    expect(cell.terminated).toEqual(['d1']);
    expect(cell.task).toMatchObject({ step: 'unshelve', stepHost: 'd2', attempt: 2 });
    await cell.drive({ 'unshelve@d1': 'lost' });
    expect(cell.state()).toBe('active/- on d2 m1.small [inst@d2]');
  });
});

describe('refused actions put the instance back and hold nothing for them', () => {
  test('a move the instance cannot take now: task_state cleared with a fault, RevertMove, migration error', async () => {
    const cell = new FakeActionCell({ vmState: 'paused', taskState: 'resize_prep' }).withMigration('resize', 'pre-migrating', 'd1');
    await resize(cell);
    expect(cell.state()).toBe('paused/- on src m1.small [inst@src]');
    expect(cell.migration?.status).toBe('error');
    expect(cell.faults.map((f) => f.message)).toEqual([`Cannot 'resize' instance ${INSTANCE} while it is in vm_state paused`]);
    expect(cell.events).toEqual(['compute_prep_resize - error']);
    expect(cell.finished).toEqual(['req-1']);
    expect(cell.casts).toEqual([]);
  });

  test('another action in progress: its task and state untouched, only this action ends in error', async () => {
    const cell = new FakeActionCell({ taskState: 'powering-off' });
    await cell.act({ action: 'stop' });
    await cell.act({ action: 'reboot', requestId: 'req-2', rebootType: 'HARD' });
    expect(cell.task).toMatchObject({ requestId: 'req-1', step: 'power_off' });
    expect(cell.row?.taskState).toBe('powering-off');
    expect(cell.faults).toEqual([]);
    expect(cell.finished).toEqual(['req-2']);
  });

  test.each([
    ['confirm of a migration that is not finished', { action: 'confirmResize' }, `migration ${MIGRATION} is migrating, not finished`],
    ['an unknown action', { action: 'pause' }, 'unknown action pause'],
  ])('%s', async (_n, req, problem) => {
    const cell = new FakeActionCell({ vmState: 'resized' }).withMigration('resize', 'migrating', 'd1', false);
    await cell.act({ ...req, migrationUuid: MIGRATION });
    expect(cell.events).toEqual([expect.stringMatching(/ error$/)]);
    expect(cell.finished).toEqual(['req-1']);
    expect(cell.migration?.status).toBe('migrating');
    expect(cell.eventDetails).toEqual([problem]);
  });

  test("an unshelve refused releases the scheduler's claim: SHELVED_OFFLOADED holds nothing", async () => {
    const cell = new FakeActionCell({ vmState: 'shelved_offloaded', taskState: 'unshelving', host: null, node: null });
    cell.alloc.set(INSTANCE, 'd1');
    await cell.act({ action: 'unshelve', hostList: [] });
    expect(cell.state()).toBe('shelved_offloaded/- on - m1.small []');
  });
});

describe("a step that cannot happen is that step's failure", () => {
  test('a prep_resize cast the broker refuses moves the resize to the next alternate at once', async () => {
    const cell = resizing();
    cell.unroutable = ['d1'];
    await resize(cell);
    expect(cell.log.filter((l) => l.startsWith('cast') || l.startsWith('claim'))).toEqual([
      'cast prep_resize d1 #1 refused',
      'claimMove d2',
      'cast prep_resize d2 #2',
    ]);
    await cell.drive();
    expect(cell.state()).toBe('resized/- on d2 m1.medium→m1.medium [inst@d2 mig@src]');
  });

  test('a stop cast to a host nobody serves ends the stop with a fault', async () => {
    const cell = new FakeActionCell({ taskState: 'powering-off' });
    cell.unroutable = ['src'];
    await cell.act({ action: 'stop' });
    expect(cell.state()).toBe('active/- on src m1.small [inst@src]');
    expect(cell.faults[0]?.message).toBe('the broker refused the power_off cast to compute.src: no compute serves host src');
  });

  test('the watchdog fails an overdue step: the next alternate, then the end; nothing waits for good', async () => {
    const cell = resizing();
    await resize(cell);
    expect(await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 })).toBe(0);
    cell.now = new Date(cell.now.getTime() + 61_000);
    expect(await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 })).toBe(1);
    expect(cell.task).toMatchObject({ step: 'prep_resize', stepHost: 'd2', attempt: 2 });
    cell.now = new Date(cell.now.getTime() + 61_000);
    await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 });
    expect(cell.state()).toBe('active/- on src m1.small [inst@src]');
    expect(cell.migration?.status).toBe('error');
    expect(cell.faults[0]?.details).toContain('no prep_resize result from host d2 by the step deadline');
    // the late result of the first destination changes nothing
    await cell.report(cell.casts[0] as (typeof cell.casts)[number], 'ok');
    expect(cell.state()).toBe('active/- on src m1.small [inst@src]');
  });
});

describe('a confirm whose source never answers is confirmed without it (never VERIFY_RESIZE for good)', () => {
  const verifying = (): FakeActionCell => {
    const cell = new FakeActionCell({
      vmState: 'resized',
      host: 'd1',
      node: 'd1-node',
      flavor: MEDIUM,
      oldFlavor: { ...MEDIUM, name: 'm1.small', vcpus: 1 },
      newFlavor: MEDIUM,
    });
    cell.migration = {
      uuid: MIGRATION,
      instanceUuid: INSTANCE,
      migrationType: 'resize',
      status: 'finished',
      sourceCompute: 'src',
      sourceNode: 'src-node',
      destCompute: 'd1',
      destNode: 'd1-node',
    };
    cell.alloc.set(MIGRATION, 'src');
    return cell;
  };
  const later = (cell: FakeActionCell): void => {
    cell.now = new Date(cell.now.getTime() + 61_000);
  };
  test.each([
    [
      'silent past the step deadline (the watchdog)',
      async (cell: FakeActionCell) => {
        await cell.act({ action: 'confirmResize' });
        expect(await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 })).toBe(0);
        later(cell);
        expect(await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 })).toBe(1);
      },
      'no confirm_resize result from host src by the step deadline',
    ],
    [
      'forced down or deleted (the watchdog, at once)',
      async (cell: FakeActionCell) => {
        cell.goneHosts = ['src'];
        await cell.act({ action: 'confirmResize' });
        expect(await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 })).toBe(1);
      },
      'host src is gone (its compute service was deleted or forced down)',
    ],
    [
      'no queue for it (the broker refuses the cast)',
      async (cell: FakeActionCell) => {
        cell.unroutable = ['src'];
        await cell.act({ action: 'confirmResize' });
      },
      'the broker refused the confirm_resize cast to compute.src: no compute serves host src',
    ],
    [
      'no compute process serves it any more',
      async (cell: FakeActionCell) => {
        await cell.act({ action: 'confirmResize' });
        await cell.report(cell.casts[0] as (typeof cell.casts)[number], 'fail', 'compute.host.not_served');
      },
      'confirm_resize failed on src',
    ],
  ] as const)(
    "%s: ACTIVE on the destination, the migration confirmed and released, a terminate queued for the source's copy",
    async (_n, sourceSilent, why) => {
      const cell = verifying();
      await sourceSilent(cell);
      expect(cell.state()).toBe('active/- on d1 m1.medium [inst@d1]');
      expect(cell.migration?.status).toBe('confirmed');
      expect(cell.terminated).toEqual(['src']);
      expect(cell.events).toEqual(['compute_confirm_resize src error']);
      expect(cell.eventDetails).toEqual([
        `${why}; confirmed without the source: its copy on src is destroyed when that host takes its casts again`,
      ]);
      expect(cell.faults).toEqual([]);
      expect(cell.task).toBeUndefined();
      expect(cell.finished).toEqual(['req-1']);
    },
  );

  test("the source's late answer changes nothing; the auto-confirm finds nothing left to confirm", async () => {
    const cell = verifying();
    await autoConfirmResizes(cell.ports(), silent, 1000);
    later(cell);
    await runStepWatchdog(cell.ports(), silent, { serviceDownTimeMs: 60_000 });
    const released = cell.log.filter((l) => l === 'release migration').length;
    await cell.report(cell.casts[0] as (typeof cell.casts)[number], 'ok');
    await cell.report(cell.casts[0] as (typeof cell.casts)[number], 'fail');
    expect(cell.log.filter((l) => l === 'release migration')).toHaveLength(released);
    expect(cell.state()).toBe('active/- on d1 m1.medium [inst@d1]');
    expect(cell.migration?.status).toBe('confirmed');
    expect(await autoConfirmResizes(cell.ports(), silent, 1000)).toBe(0);
  });
});

describe('delete during a move leaves nothing', () => {
  test("a step result for a deleted instance releases its migration and terminates the reporting host's guest", async () => {
    const cell = resizing();
    await resize(cell);
    await cell.report(cell.casts[0] as (typeof cell.casts)[number], 'ok');
    cell.row = undefined;
    cell.alloc.delete(INSTANCE); // the super-conductor's delete released the instance
    await cell.report(cell.casts[1] as (typeof cell.casts)[number], 'ok');
    expect([...cell.alloc.keys()]).toEqual([]);
    expect(cell.migration?.status).toBe('error');
    expect(cell.terminated.sort()).toEqual(['d1', 'src']);
    expect(cell.casts).toHaveLength(2);
  });

  test("the sweep ends a deleted instance's migration that nothing reports on (VERIFY_RESIZE, evacuation done)", async () => {
    const cell = new FakeActionCell({ vmState: 'resized', host: 'd1' });
    cell.migration = {
      uuid: MIGRATION,
      instanceUuid: INSTANCE,
      migrationType: 'resize',
      status: 'finished',
      sourceCompute: 'src',
      sourceNode: 'src-node',
      destCompute: 'd1',
      destNode: 'd1-node',
    };
    cell.alloc.set(MIGRATION, 'src');
    expect(await cleanDeletedInstancesMoves(cell.ports(), silent)).toBe(0);
    cell.row = undefined;
    expect(await cleanDeletedInstancesMoves(cell.ports(), silent)).toBe(1);
    expect([...cell.alloc.keys()]).toEqual([]);
    expect(cell.migration.status).toBe('error');
    expect(cell.terminated).toEqual(['d1', 'src']);
    expect(await cleanDeletedInstancesMoves(cell.ports(), silent)).toBe(0);
  });
});

test('resize_confirm_window: a VERIFY_RESIZE past it is confirmed under a request of its own', async () => {
  const cell = new FakeActionCell({ vmState: 'resized', host: 'd1', node: 'd1-node', flavor: MEDIUM, newFlavor: MEDIUM });
  cell.migration = {
    uuid: MIGRATION,
    instanceUuid: INSTANCE,
    migrationType: 'resize',
    status: 'finished',
    sourceCompute: 'src',
    sourceNode: 'src-node',
    destCompute: 'd1',
    destNode: 'd1-node',
  };
  cell.alloc.set(MIGRATION, 'src');
  expect(await autoConfirmResizes(cell.ports(), silent, 1000)).toBe(1);
  expect(cell.casts.map((c) => [c.step, c.host, c.requestId])).toEqual([
    ['confirm_resize', 'src', `req-auto-confirm-${MIGRATION}-${cell.now.getTime()}`],
  ]);
  await cell.drive();
  expect(cell.state()).toBe('active/- on d1 m1.medium [inst@d1]');
  expect(cell.migration.status).toBe('confirmed');
  expect(await autoConfirmResizes(cell.ports(), silent, 1000)).toBe(0);
});
