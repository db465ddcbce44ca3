/**
 * The action state machines over in-memory ports (test/unit/fake-action-cell.ts): each case starts
 * from the row the super-conductor leaves (task_state applied, migration created, the first
 * destination claimed with ClaimMove), plays the computes with scripted step outcomes, and checks
 * the steps cast, the instance, the migration, placement, the events and the fault at the end.
 */
import { FakeActionCell, INSTANCE, MEDIUM, MIGRATION, sel } from '../../test/unit/fake-action-cell';
import { onHostsHeardFrom } from './action-passes';

const hosts = (...h: string[]) => h.map(sel);

describe('lifecycle actions stay on their host and keep their allocation', () => {
  test.each([
    // name, row, request, script, steps answered, end state, events
    [
      'stop',
      { taskState: 'powering-off' },
      { action: 'stop' },
      {},
      ['power_off@src'],
      'stopped/- on src m1.small [inst@src]',
      ['compute_stop_instance src ok'],
    ],
    [
      'stop fails: back to ACTIVE with a fault',
      { taskState: 'powering-off' },
      { action: 'stop' },
      { 'power_off@src': 'fail' } as const,
      ['power_off@src'],
      'active/- on src m1.small [inst@src]',
      ['compute_stop_instance src error'],
    ],
    [
      'start',
      { vmState: 'stopped', powerState: 4, taskState: 'powering-on' },
      { action: 'start' },
      {},
      ['power_on@src'],
      'active/- on src m1.small [inst@src]',
      ['compute_start_instance src ok'],
    ],
    [
      'soft reboot',
      { taskState: 'rebooting' },
      { action: 'reboot', rebootType: 'SOFT' },
      {},
      ['reboot_soft@src'],
      'active/- on src m1.small [inst@src]',
      ['compute_reboot_instance src ok'],
    ],
    [
      'hard reboot of a stopped server',
      { vmState: 'stopped', taskState: 'rebooting_hard' },
      { action: 'reboot', rebootType: 'HARD' },
      {},
      ['reboot_hard@src'],
      'active/- on src m1.small [inst@src]',
      ['compute_reboot_instance src ok'],
    ],
    [
      'rebuild keeps a stopped server stopped',
      { vmState: 'stopped', taskState: 'rebuilding' },
      { action: 'rebuild', imageRef: 'img-2' },
      {},
      ['rebuild@src'],
      'stopped/- on src m1.small [inst@src]',
      ['compute_rebuild_instance src ok'],
    ],
    [
      'shelve offloads at once: no host, nothing held',
      { taskState: 'shelving' },
      { action: 'shelve' },
      {},
      ['shelve_offload@src'],
      'shelved_offloaded/- on - m1.small []',
      ['compute_shelve_instance src ok'],
    ],
    [
      'shelve fails: still ACTIVE, still holding',
      { taskState: 'shelving' },
      { action: 'shelve' },
      { 'shelve_offload@src': 'fail' } as const,
      ['shelve_offload@src'],
      'active/- on src m1.small [inst@src]',
      ['compute_shelve_instance src error'],
    ],
    [
      'shelveOffload of a SHELVED server',
      { vmState: 'shelved', taskState: 'shelving_offloading' },
      { action: 'shelveOffload' },
      {},
      ['shelve_offload@src'],
      'shelved_offloaded/- on - m1.small []',
      ['compute_shelve_offload_instance src ok'],
    ],
  ] as const)('%s', async (_n, row, req, script, steps, end, events) => {
    const cell = new FakeActionCell(row);
    await cell.act(req);
    expect(await cell.drive(script)).toEqual(steps);
    expect(cell.state()).toBe(end);
    expect(cell.events).toEqual(events);
    expect(cell.task).toBeUndefined();
    expect(cell.finished).toEqual(['req-1']);
    expect(cell.faults.map((f) => f.message)).toEqual(
      events[0]?.endsWith('error') === true ? [`${steps[0]?.split('@')[0]} failed on src`] : [],
    );
  });

  test('rebuild with a new image and name records them', async () => {
    const cell = new FakeActionCell({ taskState: 'rebuilding' });
    await cell.act({ action: 'rebuild', imageRef: 'img-2', displayName: 'new' });
    expect(cell.casts[0]).toMatchObject({ step: 'rebuild', imageRef: 'img-2' });
    await cell.drive();
    expect(cell.row).toMatchObject({ vmState: 'active', imageRef: 'img-2', displayName: 'new', powerState: 1 });
  });
});

describe("unshelve: the scheduler's host, then the alternates (replace-claims), else back to SHELVED_OFFLOADED holding nothing", () => {
  const shelved = (): FakeActionCell => {
    const cell = new FakeActionCell({ vmState: 'shelved_offloaded', powerState: 4, taskState: 'unshelving', host: null, node: null });
    cell.alloc.set(INSTANCE, 'd1');
    cell.fits = ['d2', 'd3'];
    return cell;
  };
  test.each([
    ['on the first host', {}, ['unshelve@d1'], 'active/- on d1 m1.small [inst@d1]', 0],
    [
      'the first fails: the next alternate',
      { 'unshelve@d1': 'fail' } as const,
      ['unshelve@d1', 'unshelve@d2'],
      'active/- on d2 m1.small [inst@d2]',
      0,
    ],
    [
      'all fail: SHELVED_OFFLOADED, nothing held, MaxRetriesExceeded',
      { 'unshelve@d1': 'fail', 'unshelve@d2': 'fail', 'unshelve@d3': 'fail' } as const,
      ['unshelve@d1', 'unshelve@d2', 'unshelve@d3'],
      'shelved_offloaded/- on - m1.small []',
      1,
    ],
  ] as const)('%s', async (_n, script, steps, end, faults) => {
    const cell = shelved();
    await cell.act({ action: 'unshelve', hostList: hosts('d1', 'd2', 'd3') });
    expect(cell.row).toMatchObject({ taskState: 'spawning' });
    expect(await cell.drive(script)).toEqual(steps);
    expect(cell.state()).toBe(end);
    expect(cell.faults).toHaveLength(faults);
    if (faults > 0)
      expect(cell.faults[0]?.message).toMatch(
        /^Exceeded maximum number of retries\. Exhausted all hosts available for retrying unshelve failures/,
      );
  });
});

describe('cold migrate and resize', () => {
  const resizing = (): FakeActionCell => {
    const cell = new FakeActionCell({ taskState: 'resize_prep' }).withMigration('resize', 'pre-migrating', 'd1');
    cell.fits = ['d2'];
    return cell;
  };
  const resize = (cell: FakeActionCell): Promise<void> =>
    cell.act({ action: 'resize', migrationUuid: MIGRATION, hostList: hosts('d1', 'd2', 'd3'), newFlavor: MEDIUM });

  test('prep_resize on the destination, resize_instance on the source, finish_resize on the destination: VERIFY_RESIZE', async () => {
    const cell = resizing();
    await resize(cell);
    expect(cell.row).toMatchObject({ oldFlavor: { name: 'm1.small' }, newFlavor: { name: 'm1.medium' } });
    expect(cell.casts[0]).toMatchObject({
      step: 'prep_resize',
      host: 'd1',
      peerHost: 'src',
      flavor: { name: 'm1.medium' },
      migrationUuid: MIGRATION,
      attempt: 1,
    });
    expect(await cell.drive()).toEqual(['prep_resize@d1', 'resize_instance@src', 'finish_resize@d1']);
    expect(cell.state()).toBe('resized/- on d1 m1.medium→m1.medium [inst@d1 mig@src]');
    expect(cell.migration).toMatchObject({ status: 'finished', destCompute: 'd1' });
    expect(cell.events).toEqual(['compute_prep_resize d1 ok', 'compute_resize_instance src ok', 'compute_finish_resize d1 ok']);
    expect(cell.faults).toEqual([]);
  });

  test.each([
    [
      'prep fails on the first destination: the next alternate, claimed with ClaimMove (a full one skipped)',
      { 'prep_resize@d1': 'fail' } as const,
      ['prep_resize@d1', 'prep_resize@d2', 'resize_instance@src', 'finish_resize@d2'],
      'resized/- on d2 m1.medium→m1.medium [inst@d2 mig@src]',
      'finished',
      undefined,
    ],
    [
      'prep fails everywhere: RevertMove, migration error, ACTIVE on the source with MaxRetriesExceeded',
      { 'prep_resize@d1': 'fail', 'prep_resize@d2': 'fail' } as const,
      ['prep_resize@d1', 'prep_resize@d2'],
      'active/- on src m1.small [inst@src]',
      'error',
      /^Exceeded maximum number of retries/,
    ],
    [
      'resize_instance fails on the source: RevertMove, ACTIVE on the source',
      { 'resize_instance@src': 'fail' } as const,
      ['prep_resize@d1', 'resize_instance@src'],
      'active/- on src m1.small [inst@src]',
      'error',
      /^resize_instance failed on src$/,
    ],
    [
      'finish_resize fails: reverted on the destination, powered on at the source, RevertMove',
      { 'finish_resize@d1': 'fail' } as const,
      ['prep_resize@d1', 'resize_instance@src', 'finish_resize@d1', 'revert_resize@d1', 'finish_revert_resize@src'],
      'active/- on src m1.small [inst@src]',
      'error',
      /^finish_resize failed on d1$/,
    ],
    [
      "finish_resize fails and so does its rollback: ERROR on the source, the source's allocation back",
      { 'finish_resize@d1': 'fail', 'revert_resize@d1': 'fail' } as const,
      ['prep_resize@d1', 'resize_instance@src', 'finish_resize@d1', 'revert_resize@d1'],
      'error/- on src m1.small [inst@src]',
      'error',
      /rollback failed: revert_resize failed on d1/,
    ],
  ] as const)('%s', async (_n, script, steps, end, status, fault) => {
    const cell = resizing();
    await resize(cell);
    expect(await cell.drive(script)).toEqual(steps);
    expect(cell.state()).toBe(end);
    expect(cell.migration?.status).toBe(status);
    if (fault === undefined) expect(cell.faults).toEqual([]);
    else expect(cell.faults.map((f) => f.message)).toEqual([expect.stringMatching(fault)]);
    expect(cell.task).toBeUndefined();
  });

  test('an alternate without room is skipped (its claim fails), the next one taken', async () => {
    const cell = resizing();
    cell.fits = ['d3'];
    await resize(cell);
    await cell.drive({ 'prep_resize@d1': 'fail' });
    expect(cell.log.filter((l) => l.startsWith('claimMove'))).toEqual(['claimMove d2', 'claimMove d3']);
    expect(cell.state()).toBe('resized/- on d3 m1.medium→m1.medium [inst@d3 mig@src]');
    expect(cell.events).toContain('compute_prep_resize d1 error');
  });

  test('a rollback that could not revert terminates the new guest on the destination', async () => {
    const cell = resizing();
    await resize(cell);
    await cell.drive({ 'finish_resize@d1': 'fail', 'revert_resize@d1': 'fail' });
    expect(cell.terminated).toEqual(['d1']);
  });
});

describe('confirm and revert of VERIFY_RESIZE', () => {
  const verifying = (powerState = 1): FakeActionCell => {
    const cell = new FakeActionCell({
      vmState: 'resized',
      host: 'd1',
      node: 'd1-node',
      flavor: MEDIUM,
      oldFlavor: { ...MEDIUM, name: 'm1.small', vcpus: 1 },
      newFlavor: MEDIUM,
      powerState,
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
  test.each([
    [
      'confirm: the source guest destroyed, the migration released',
      'confirmResize',
      null,
      {},
      ['confirm_resize@src'],
      'active/- on d1 m1.medium [inst@d1]',
      'confirmed',
      ['compute_confirm_resize src ok'],
    ],
    [
      'confirm fails: still VERIFY_RESIZE, may be confirmed again',
      'confirmResize',
      null,
      { 'confirm_resize@src': 'fail' } as const,
      ['confirm_resize@src'],
      'resized/- on d1 m1.medium→m1.medium [inst@d1 mig@src]',
      'finished',
      ['compute_confirm_resize src error'],
    ],
    [
      'revert: destroyed on the destination, back on the source with the old flavor (RevertMove)',
      'revertResize',
      'resize_reverting',
      {},
      ['revert_resize@d1', 'finish_revert_resize@src'],
      'active/- on src m1.small [inst@src]',
      'reverted',
      ['compute_revert_resize d1 ok', 'compute_finish_revert_resize src ok'],
    ],
    [
      'revert fails on the destination: still VERIFY_RESIZE',
      'revertResize',
      'resize_reverting',
      { 'revert_resize@d1': 'fail' } as const,
      ['revert_resize@d1'],
      'resized/- on d1 m1.medium→m1.medium [inst@d1 mig@src]',
      'finished',
      ['compute_revert_resize d1 error'],
    ],
    [
      'revert fails on the source: ERROR on the source, the source allocation back',
      'revertResize',
      'resize_reverting',
      { 'finish_revert_resize@src': 'fail' } as const,
      ['revert_resize@d1', 'finish_revert_resize@src'],
      'error/- on src m1.small [inst@src]',
      'error',
      ['compute_revert_resize d1 ok', 'compute_finish_revert_resize src error'],
    ],
  ] as const)('%s', async (_n, action, taskState, script, steps, end, status, events) => {
    const cell = verifying();
    if (taskState !== null) cell.row = { ...(cell.row as NonNullable<FakeActionCell['row']>), taskState };
    // NOTE: as the super-conductor forwards them: no migration named, the instance's finished resize is theirs
    await cell.act({ action, migrationUuid: '' });
    expect(cell.migration?.status).toBe(action === 'confirmResize' ? 'confirming' : 'reverting');
    expect(await cell.drive(script)).toEqual(steps);
    expect(cell.state()).toBe(end);
    expect(cell.migration?.status).toBe(status);
    expect(cell.events).toEqual(events);
  });

  test('confirm of a resize of a stopped server ends SHUTOFF', async () => {
    const cell = verifying(4);
    await cell.act({ action: 'confirmResize', migrationUuid: MIGRATION });
    await cell.drive();
    expect(cell.row).toMatchObject({ vmState: 'stopped', oldFlavor: undefined, newFlavor: undefined });
  });
});

describe('live migration', () => {
  const migrating = (): FakeActionCell => {
    const cell = new FakeActionCell({ taskState: 'migrating' }).withMigration('live-migration', 'accepted', 'd1');
    cell.fits = ['d2'];
    return cell;
  };
  test.each([
    [
      'pre on the destination, live and post on the source: the instance on the destination, the migration released',
      {},
      ['pre_live_migration@d1', 'live_migration@src', 'post_live_migration@src'],
      'active/- on d1 m1.small [inst@d1]',
      'completed',
      [],
    ],
    [
      'pre fails: the next alternate',
      { 'pre_live_migration@d1': 'fail' } as const,
      ['pre_live_migration@d1', 'pre_live_migration@d2', 'live_migration@src', 'post_live_migration@src'],
      'active/- on d2 m1.small [inst@d2]',
      'completed',
      [],
    ],
    [
      'pre fails everywhere: ACTIVE on the source, RevertMove',
      { 'pre_live_migration@d1': 'fail', 'pre_live_migration@d2': 'fail' } as const,
      ['pre_live_migration@d1', 'pre_live_migration@d2'],
      'active/- on src m1.small [inst@src]',
      'error',
      [],
    ],
    [
      'the live migration fails: rolled back at the destination, ACTIVE on the source',
      { 'live_migration@src': 'fail' } as const,
      ['pre_live_migration@d1', 'live_migration@src', 'rollback_live_migration@d1'],
      'active/- on src m1.small [inst@src]',
      'error',
      [],
    ],
    [
      "the rollback fails too: ACTIVE on the source, the destination's copy terminated",
      { 'live_migration@src': 'fail', 'rollback_live_migration@d1': 'fail' } as const,
      ['pre_live_migration@d1', 'live_migration@src', 'rollback_live_migration@d1'],
      'active/- on src m1.small [inst@src]',
      'error',
      ['d1'],
    ],
    [
      "post fails: the guest runs on the destination, the source's copy terminated",
      { 'post_live_migration@src': 'fail' } as const,
      ['pre_live_migration@d1', 'live_migration@src', 'post_live_migration@src'],
      'active/- on d1 m1.small [inst@d1]',
      'completed',
      ['src'],
    ],
  ] as const)('%s', async (_n, script, steps, end, status, terminated) => {
    const cell = migrating();
    await cell.act({ action: 'live-migration', migrationUuid: MIGRATION, hostList: hosts('d1', 'd2') });
    expect(await cell.drive(script)).toEqual(steps);
    expect(cell.state()).toBe(end);
    expect(cell.migration?.status).toBe(status);
    expect(cell.terminated).toEqual(terminated);
  });

  test.each([
    ['as asked', 'true', 'true'],
    ['false', 'false', 'false'],
    ["none from an older sender: auto (Nova's default since 2.25)", '', 'auto'],
  ])('block_migration reaches every step of it, and the rollback: %s', async (_n, asked, cast) => {
    const cell = migrating();
    await cell.act({ action: 'live-migration', migrationUuid: MIGRATION, hostList: hosts('d1'), blockMigration: asked });
    await cell.drive({ 'live_migration@src': 'fail' });
    expect(cell.casts.map((c) => `${c.step}:${c.blockMigration}`)).toEqual([
      `pre_live_migration:${cast}`,
      `live_migration:${cast}`,
      `rollback_live_migration:${cast}`,
    ]);
  });

  test('other actions cast no block_migration', async () => {
    const cell = new FakeActionCell({ taskState: 'resize_prep' }).withMigration('migration', 'pre-migrating', 'd1');
    await cell.act({ action: 'migrate', migrationUuid: MIGRATION, hostList: hosts('d1'), blockMigration: 'true' });
    await cell.drive();
    expect(cell.casts.map((c) => c.blockMigration)).toEqual(['', '', '']);
  });

  test("events carry Nova's names and hosts", async () => {
    const cell = migrating();
    await cell.act({ action: 'live-migration', migrationUuid: MIGRATION, hostList: hosts('d1') });
    await cell.drive();
    expect(cell.events).toEqual([
      'compute_pre_live_migration d1 ok',
      'compute_live_migration src ok',
      'compute_post_live_migration_at_destination d1 ok',
    ]);
  });
});

describe('evacuate', () => {
  const evacuating = (): FakeActionCell => {
    const cell = new FakeActionCell({ taskState: 'rebuilding' }).withMigration('evacuation', 'accepted', 'd1');
    cell.fits = ['d2'];
    return cell;
  };
  test('rebuilt on the destination: `done`, the migration keeps the source until the source is heard from, then destroy_evacuated', async () => {
    const cell = evacuating();
    await cell.act({ action: 'evacuate', migrationUuid: MIGRATION, hostList: hosts('d1', 'd2') });
    expect(await cell.drive()).toEqual(['rebuild_evacuated@d1']);
    expect(cell.state()).toBe('active/- on d1 m1.small [inst@d1 mig@src]');
    expect(cell.migration?.status).toBe('done');
    expect(await onHostsHeardFrom(cell.ports(), { info: () => undefined, warn: () => undefined }, ['d2'])).toBe(0);
    expect(await onHostsHeardFrom(cell.ports(), { info: () => undefined, warn: () => undefined }, ['src'])).toBe(1);
    expect(cell.casts.at(-1)).toMatchObject({ step: 'destroy_evacuated', host: 'src', migrationUuid: MIGRATION });
    await cell.drive({ 'destroy_evacuated@src': 'fail' });
    expect(cell.migration?.status).toBe('done');
    await onHostsHeardFrom(cell.ports(), { info: () => undefined, warn: () => undefined }, ['src']);
    await cell.report(cell.casts.at(-1) as (typeof cell.casts)[number], 'ok');
    expect(cell.state()).toBe('active/- on d1 m1.small [inst@d1]');
    expect(cell.migration?.status).toBe('completed');
  });

  test.each([
    [
      'the first destination fails: the next alternate',
      { 'rebuild_evacuated@d1': 'fail' } as const,
      'active/- on d2 m1.small [inst@d2 mig@src]',
      'done',
    ],
    [
      'every destination fails: back on the (down) source, RevertMove, migration error',
      { 'rebuild_evacuated@d1': 'fail', 'rebuild_evacuated@d2': 'fail' } as const,
      'active/- on src m1.small [inst@src]',
      'error',
    ],
  ] as const)('%s', async (_n, script, end, status) => {
    const cell = evacuating();
    await cell.act({ action: 'evacuate', migrationUuid: MIGRATION, hostList: hosts('d1', 'd2') });
    await cell.drive(script);
    expect(cell.state()).toBe(end);
    expect(cell.migration?.status).toBe(status);
  });
});
