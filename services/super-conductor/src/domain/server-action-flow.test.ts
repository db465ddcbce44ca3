import type { Failure, ServerActionRequest } from '@cellsched/wire';
import { BIG, FakeActionCell, FLAVOR, sel } from '../../test/support/fake-action-cell';
import type { ConductorLog } from '../ports';
import { runServerAction, type ServerActionOutcome, type ServerActionSettings } from './server-action-flow';
import { migrationUuidFor, planServerAction, type ActionPlan } from './server-actions';

const SETTINGS: ServerActionSettings = { conductorHost: 'sc-1', numAlternates: 2, allowResizeToSameHost: false };
const quiet: ConductorLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

function request(cell: FakeActionCell, action: string, extra: Partial<ServerActionRequest> = {}): ServerActionRequest {
  return {
    instanceUuid: cell.instance?.uuid ?? '',
    cellUuid: 'cell-1',
    action,
    requestId: `req-${action}`,
    userId: 'u1',
    projectId: 'p1',
    taskState: '',
    rebootType: '',
    flavor: undefined,
    host: '',
    imageRef: '',
    blockMigration: '',
    availabilityZone: '',
    displayName: '',
    force: false,
    expiredAfterS: 0,
    ...extra,
  };
}

function plan(req: ServerActionRequest): ActionPlan {
  const p = planServerAction(req);
  if ('invalid' in p) throw new Error(p.invalid);
  return p;
}

/** One delivery of the cast: the intent pending as the API recorded it (unless `redelivery` of a finished one). */
async function deliver(cell: FakeActionCell, req: ServerActionRequest, settings = SETTINGS): Promise<ServerActionOutcome> {
  return runServerAction(cell.ports(), quiet, settings, plan(req));
}

const noValidHost: Failure = {
  code: 'scheduler.no_valid_host',
  message: 'No valid host was found. no host passed the filters',
  retryable: false,
  expected: true,
  metadata: {},
  diagnosis: [{ filter: 'ComputeFilter', hostsBefore: 2, hostsAfter: 0, reason: 'host is down (2 hosts)' }],
};

describe('server_action: moves', () => {
  it("migrate: resize_prep and a migration, a move selection in the instance's cell with the current flavor, the destination recorded, then the cast", async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('cast');
    const mig = migrationUuidFor(req.instanceUuid, req.requestId);
    expect(cell.log).toEqual(['begin migrate resize_prep', 'select move', 'destination h2', 'cast migrate [h2,h3]', 'intent cleared']);
    expect(cell.migrations.get(mig)).toMatchObject({
      type: 'migration',
      status: 'pre-migrating',
      source: 'h1',
      destCompute: 'h2',
      destNode: 'h2-node',
    });
    const [{ spec, move } = {} as never] = cell.selections;
    expect(move).toEqual({ migrationUuid: mig, sourceHost: 'h1', sourceNode: 'h1-node', allowSameHost: false, force: false });
    expect(cell.selections[0]?.numAlternates).toBe(2);
    expect(spec).toMatchObject({
      instanceUuid: req.instanceUuid,
      flavor: FLAVOR,
      numInstances: 1,
      ignoreHosts: [],
      requestedDestination: { cellUuid: 'cell-1', host: '' },
    });
    expect(cell.casts[0]).toMatchObject({
      action: 'migrate',
      migrationUuid: mig,
      newFlavor: FLAVOR,
      requestSpec: spec,
      requestId: req.requestId,
    });
    expect([...(cell.actions.get(req.requestId)?.events ?? [])]).toEqual([
      ['conductor_migrate_server@sc-1', 'Success'],
      ['cold_migrate@sc-1', 'Success'],
    ]);
    expect(cell.instance?.taskState).toBe('resize_prep');
    expect(cell.intent).toBeUndefined();
  });

  it('resize: the new flavor is scheduled and cast, the RequestSpec keeps it (Nova), same host only when allowed', async () => {
    const cell = new FakeActionCell();
    cell.spec = {
      instanceUuid: cell.instance?.uuid ?? '',
      projectId: 'p1',
      userId: 'u1',
      flavor: FLAVOR,
      image: undefined,
      numInstances: 1,
      availabilityZone: 'az1',
      instanceGroup: { uuid: 'g', policy: 'anti-affinity', hosts: [], members: [], maxServerPerHost: 0 },
      schedulerHints: {},
      requestedDestination: undefined,
      ignoreHosts: ['old'],
      seed: 5,
      requestId: 'boot',
    };
    const req = request(cell, 'resize', { flavor: BIG });
    cell.intent = req.requestId;
    expect(await deliver(cell, req, { ...SETTINGS, allowResizeToSameHost: true })).toBe('cast');
    expect(cell.selections[0]?.spec).toMatchObject({
      flavor: BIG,
      availabilityZone: 'az1',
      instanceGroup: { uuid: 'g' },
      ignoreHosts: [],
      seed: 5,
      requestId: req.requestId,
    });
    expect(cell.selections[0]?.move?.allowSameHost).toBe(true);
    expect(cell.casts[0]?.newFlavor).toEqual(BIG);
    expect(cell.savedSpecs).toEqual([expect.objectContaining({ flavor: BIG, ignoreHosts: ['old'], requestId: 'boot' })]);
    expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))).toMatchObject({
      type: 'resize',
      oldType: 1,
      newType: 3,
    });
  });

  it('live migration and evacuation: their migration types and first statuses, their conductor events, a requested host passed on', async () => {
    for (const [action, type, event, taskState] of [
      ['live-migration', 'live-migration', 'conductor_live_migrate_instance', 'migrating'],
      ['evacuate', 'evacuation', 'rebuild_server', 'rebuilding'],
    ]) {
      const cell = new FakeActionCell();
      const req = request(cell, action as string, { host: 'h3' });
      cell.intent = req.requestId;
      expect(await deliver(cell, req)).toBe('cast');
      expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))).toMatchObject({
        type,
        status: 'accepted',
        destCompute: 'h2',
      });
      expect(cell.selections[0]?.spec.requestedDestination).toMatchObject({ host: 'h3', cellUuid: 'cell-1' });
      expect([...(cell.actions.get(req.requestId)?.events.keys() ?? [])]).toEqual([`${event}@sc-1`]);
      expect(cell.instance?.taskState).toBe(taskState);
      expect(cell.casts[0]?.newFlavor).toBeUndefined();
    }
  });

  it('live migration: the block_migration asked for travels to the cell conductor; other actions send none', async () => {
    for (const [action, blockMigration, cast] of [
      ['live-migration', 'true', 'true'],
      ['live-migration', 'auto', 'auto'],
      ['migrate', 'true', ''],
    ]) {
      const cell = new FakeActionCell();
      const req = request(cell, action as string, { blockMigration });
      cell.intent = req.requestId;
      expect(await deliver(cell, req)).toBe('cast');
      expect(cell.casts[0]?.blockMigration).toBe(cast);
    }
  });

  it('NoValidHost: migration error, task_state back, a fault with the diagnosis, events in Error, the move reverted, no cast', async () => {
    const cell = new FakeActionCell();
    cell.next = async () => ({ kind: 'no_valid_host', failure: noValidHost });
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('no_valid_host');
    expect(cell.log).toEqual(['begin migrate resize_prep', 'select move', 'revert instance migration', 'fail', 'intent cleared']);
    expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))?.status).toBe('error');
    expect(cell.instance).toMatchObject({ vmState: 'active', taskState: null });
    expect(cell.faults).toEqual(['No valid host was found. no host passed the filters']);
    expect([...(cell.actions.get(req.requestId)?.events.values() ?? [])]).toEqual(['Error', 'Error']);
    expect(cell.casts).toEqual([]);
    // a redelivery does nothing more
    expect(await deliver(cell, req)).toBe('settled');
    expect(cell.selections).toHaveLength(1);
    expect(cell.faults).toHaveLength(1);
  });

  it("an evacuate that finds no host: the instance in ERROR as Nova's conductor leaves it, migration error, the events in Error", async () => {
    const cell = new FakeActionCell();
    cell.next = async () => ({ kind: 'no_valid_host', failure: noValidHost });
    const req = request(cell, 'evacuate');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('no_valid_host');
    expect(cell.instance).toMatchObject({ vmState: 'error', taskState: null });
    expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))?.status).toBe('error');
    expect(cell.faults).toEqual(['No valid host was found. no host passed the filters']);
    expect([...(cell.actions.get(req.requestId)?.events.values() ?? [])].every((e) => e === 'Error')).toBe(true);
  });

  it('a cast the broker refuses (the cell has no conductor): the move reverted, migration error, task_state back, a fault', async () => {
    const cell = new FakeActionCell();
    cell.conductorServed = false;
    const req = request(cell, 'resize', { flavor: BIG });
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('unroutable');
    expect(cell.log.slice(-4)).toEqual(['cast refused', 'revert instance migration', 'fail', 'intent cleared']);
    expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))?.status).toBe('error');
    expect(cell.instance?.taskState).toBeNull();
    expect(cell.faults[0]).toContain('the broker refused the cast to the conductor of cell cell1');
  });
});

describe("server_action: the RequestSpec's flavor through resize, revert and confirm", () => {
  const stored = (cell: FakeActionCell) => ({
    instanceUuid: cell.instance?.uuid ?? '',
    projectId: 'p1',
    userId: 'u1',
    flavor: FLAVOR,
    image: undefined,
    numInstances: 1,
    availabilityZone: 'nova',
    instanceGroup: undefined,
    schedulerHints: {},
    requestedDestination: undefined,
    ignoreHosts: [],
    seed: 7,
    requestId: 'boot',
  });
  /** The cell's part of a resize, then of its revert. */
  const resized = (cell: FakeActionCell): void => {
    if (cell.instance !== undefined)
      cell.instance = {
        ...cell.instance,
        vmState: 'resized',
        taskState: null,
        host: 'h2',
        node: 'h2-node',
        flavor: BIG,
        oldFlavor: FLAVOR,
      };
  };
  const reverted = (cell: FakeActionCell): void => {
    if (cell.instance !== undefined)
      cell.instance = {
        ...cell.instance,
        vmState: 'active',
        taskState: null,
        host: 'h1',
        node: 'h1-node',
        flavor: FLAVOR,
        oldFlavor: undefined,
      };
  };
  const deliverNow = async (cell: FakeActionCell, req: ServerActionRequest): Promise<ServerActionOutcome> => {
    cell.intent = req.requestId;
    return deliver(cell, req);
  };

  it("revertResize puts the old flavor back in the RequestSpec before it is cast (Nova's API), once; a migrate after it is scheduled with the old flavor", async () => {
    const cell = new FakeActionCell();
    cell.spec = stored(cell);
    expect(await deliverNow(cell, request(cell, 'resize', { flavor: BIG }))).toBe('cast');
    expect(cell.spec?.flavor).toEqual(BIG);
    resized(cell);
    const revert = request(cell, 'revertResize');
    expect(await deliverNow(cell, revert)).toBe('cast');
    expect(cell.savedSpecs.map((x) => x.flavor?.name)).toEqual(['m1.medium', 'm1.small']);
    expect(cell.spec).toEqual({ ...stored(cell), flavor: FLAVOR });
    expect(cell.log.slice(-2)).toEqual(['cast revertResize []', 'intent cleared']);
    // the API's re-cast of the same revert saves nothing more
    cell.intent = revert.requestId;
    expect(await deliver(cell, revert)).toBe('cast');
    expect(cell.savedSpecs).toHaveLength(2);
    reverted(cell);
    expect(await deliverNow(cell, request(cell, 'migrate'))).toBe('cast');
    expect(cell.selections.at(-1)?.spec.flavor).toEqual(FLAVOR);
    expect(cell.casts.at(-1)?.newFlavor).toEqual(FLAVOR);
  });

  it('confirmResize keeps the new flavor, putting it back if a revert that failed on the destination restored the old one', async () => {
    const cell = new FakeActionCell();
    cell.spec = { ...stored(cell), flavor: BIG };
    resized(cell);
    expect(await deliverNow(cell, request(cell, 'confirmResize'))).toBe('cast');
    expect(cell.savedSpecs).toEqual([]);
    cell.spec = stored(cell);
    expect(await deliverNow(cell, request(cell, 'confirmResize', { requestId: 'req-confirm-2' }))).toBe('cast');
    expect(cell.spec?.flavor).toEqual(BIG);
  });

  it('a server whose RequestSpec is gone: nothing to save', async () => {
    const cell = new FakeActionCell();
    resized(cell);
    expect(await deliverNow(cell, request(cell, 'revertResize'))).toBe('cast');
    expect(cell.savedSpecs).toEqual([]);
  });
});

describe('server_action: a forced destination (evacuate 2.29+ / os-migrateLive 2.30+ with force and a host)', () => {
  const RECENT = { forcedDown: false, lastSeenUp: new Date() };

  it('evacuate: the scheduler is asked to claim that host only (move.force), with no alternates', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'evacuate', { host: 'h3', force: true });
    cell.intent = req.requestId;
    cell.next = async () => ({ kind: 'selected', destinations: [[sel('h3')]] });
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.selections[0]).toMatchObject({
      numAlternates: 0,
      move: { force: true },
      spec: { requestedDestination: { host: 'h3', cellUuid: 'cell-1' } },
    });
    expect(cell.casts[0]?.hostList.map((s) => s.serviceHost)).toEqual(['h3']);
  });

  it("force without a host, or on a migrate, is not forced (Nova's API refuses the first; migrate has no force)", async () => {
    for (const [action, host] of [
      ['evacuate', ''],
      ['migrate', 'h3'],
    ]) {
      const cell = new FakeActionCell();
      const req = request(cell, action as string, { host: host as string, force: true });
      cell.intent = req.requestId;
      await deliver(cell, req);
      expect(cell.selections[0]).toMatchObject({ numAlternates: 2, move: { force: false } });
    }
  });

  it("live migration: Nova's conductor checks of the forced host, then a forced selection", async () => {
    const cell = new FakeActionCell();
    cell.services.set('h3', RECENT);
    const req = request(cell, 'live-migration', { host: 'h3', force: true });
    cell.intent = req.requestId;
    cell.next = async () => ({ kind: 'selected', destinations: [[sel('h3')]] });
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.selections[0]).toMatchObject({ numAlternates: 0, move: { force: true } });
  });

  it('live migration to a forced host that is down, forced down, unknown or the source: the action fails before any scheduling', async () => {
    const cases: [string, { forcedDown: boolean; lastSeenUp: Date | null } | undefined, string][] = [
      ['h3', { forcedDown: false, lastSeenUp: new Date(Date.now() - 61_000) }, 'Compute service of h3 is unavailable at this time.'],
      ['h3', { forcedDown: true, lastSeenUp: new Date() }, 'Compute service of h3 is unavailable at this time.'],
      ['h3', undefined, 'Compute service of h3 is unavailable at this time.'],
    ];
    for (const [host, svc, message] of cases) {
      const cell = new FakeActionCell();
      if (svc !== undefined) cell.services.set(host, svc);
      const req = request(cell, 'live-migration', { host, force: true });
      cell.intent = req.requestId;
      expect(await deliver(cell, req)).toBe('no_valid_host');
      expect(cell.selections).toEqual([]);
      expect(cell.faults).toEqual([message]);
      expect(cell.instance).toMatchObject({ vmState: 'active', taskState: null });
      expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))?.status).toBe('error');
      expect(cell.intent).toBeUndefined();
    }
    const self = new FakeActionCell();
    self.services.set('h1', RECENT);
    const req = request(self, 'live-migration', { host: 'h1', force: true });
    self.intent = req.requestId;
    expect(await deliver(self, req)).toBe('no_valid_host');
    expect(self.faults).toEqual([`Unable to migrate instance (${req.instanceUuid}) to current host (h1).`]);
  });
});

describe('server_action: an action the api gave up on (its intent expired: expired_after_s)', () => {
  it('never taken up: recorded as failed (event in Error, a fault saying so), the instance unchanged; a late delivery starts nothing', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    expect(await deliver(cell, { ...req, expiredAfterS: 900 })).toBe('expired');
    const message = `The 'migrate' action on instance ${req.instanceUuid} was never taken up: it was not applied within 900 seconds and was abandoned. Retry the action.`;
    expect(cell.faults).toEqual([message]);
    expect([...(cell.actions.get(req.requestId)?.events ?? [])]).toEqual([['conductor_migrate_server@sc-1', `Error: ${message}`]]);
    expect(cell.instance).toMatchObject({ vmState: 'active', taskState: null });
    expect(cell.migrations.size).toBe(0);
    // the original cast, delivered late (no intent any more): nothing begins
    expect(await deliver(cell, req)).toBe('settled');
    expect(cell.log).toEqual(['given up migrate', 'intent cleared', 'intent cleared']);
    expect(cell.selections).toEqual([]);
  });

  it("a lifecycle action never taken up: its compute event on the instance's host in Error", async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'stop');
    expect(await deliver(cell, { ...req, expiredAfterS: 60 })).toBe('expired');
    expect([...(cell.actions.get(req.requestId)?.events.keys() ?? [])]).toEqual(['compute_stop_instance@h1']);
  });

  it('begun but never scheduled: failed like any action that cannot go on (task_state back, move reverted, migration error)', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    cell.next = async () => {
      throw new Error('scheduler unavailable');
    };
    await expect(deliver(cell, req)).rejects.toThrow('scheduler unavailable');
    expect(cell.instance?.taskState).toBe('resize_prep');
    cell.intent = undefined;
    expect(await deliver(cell, { ...req, expiredAfterS: 900 })).toBe('expired');
    expect(cell.instance).toMatchObject({ vmState: 'active', taskState: null });
    expect(cell.migrations.get(migrationUuidFor(req.instanceUuid, req.requestId))?.status).toBe('error');
    expect(cell.log).toContain('revert instance migration');
    expect(cell.faults[0]).toContain('was never taken up');
  });

  it('past scheduling (its destination claimed and recorded): carried on, as its redelivery would be', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    const ports = cell.ports();
    ports.cell.instanceAction = async () => {
      throw new Error('bus connection lost');
    };
    await expect(runServerAction(ports, quiet, SETTINGS, plan(req))).rejects.toThrow('bus connection lost');
    cell.intent = undefined;
    expect(await deliver(cell, { ...req, expiredAfterS: 900 })).toBe('cast');
    expect(cell.casts.map((c) => c.hostList[0]?.serviceHost)).toEqual(['h2']);
    expect(cell.faults).toEqual([]);
  });

  it('a delivery that took the action up first wins: the give-up finds it recorded and decides from what it did', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'stop');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('cast');
    // NOTE: the cast again, as a redelivery would (the cell conductor dedups per request): never a failure
    expect(await deliver(cell, { ...req, expiredAfterS: 900 })).toBe('cast');
    expect(cell.faults).toEqual([]);
    expect(cell.actions.get(req.requestId)?.failed).toBe(false);
    expect(cell.log.filter((l) => l.startsWith('given up'))).toEqual([]);
  });
});

describe('server_action: redelivery and races', () => {
  it('a redelivery after the whole cast did nothing more: no second begin, selection or cast', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    await deliver(cell, req);
    expect(await deliver(cell, req)).toBe('settled');
    expect(cell.selections).toHaveLength(1);
    expect(cell.casts).toHaveLength(1);
    expect(cell.migrations.size).toBe(1);
  });

  it('a delivery that died after recording the destination: the redelivery casts the recorded host list, alternates included, never selects again', async () => {
    // an earlier move's list on the row is not this request's: begin forgets it
    const cell = new FakeActionCell({ buildHostList: [sel('old-1'), sel('old-2')] });
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    cell.conductorServed = true;
    const ports = cell.ports();
    ports.cell.instanceAction = async () => {
      throw new Error('bus connection lost');
    };
    await expect(runServerAction(ports, quiet, SETTINGS, plan(req))).rejects.toThrow('bus connection lost');
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.selections).toHaveLength(1);
    expect(cell.casts.map((c) => [c.migrationUuid, c.hostList.map((s) => s.serviceHost)])).toEqual([
      [migrationUuidFor(req.instanceUuid, req.requestId), ['h2', 'h3']],
    ]);
    // the alternate keeps its allocation request, so the cell conductor can claim it
    expect(cell.casts[0]?.hostList[1]).toEqual(sel('h3'));
    expect(cell.intent).toBeUndefined();
  });

  it('a recast of a move recorded without its host list (an older row): the destination alone', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    const ports = cell.ports();
    ports.cell.instanceAction = async () => {
      throw new Error('bus connection lost');
    };
    await expect(runServerAction(ports, quiet, SETTINGS, plan(req))).rejects.toThrow('bus connection lost');
    if (cell.instance !== undefined) cell.instance = { ...cell.instance, buildHostList: [] };
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.casts[0]?.hostList.map((s) => [s.serviceHost, s.allocationRequest])).toEqual([['h2', undefined]]);
  });

  it('a delivery that died while scheduling: the redelivery schedules again under the same migration (the claim is replaced, not doubled)', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    cell.next = async () => {
      throw new Error('scheduler unavailable');
    };
    await expect(deliver(cell, req)).rejects.toThrow('scheduler unavailable');
    cell.next = async () => ({ kind: 'selected', destinations: [[sel('h3')]] });
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.selections.map((s) => s.move?.migrationUuid)).toEqual([
      migrationUuidFor(req.instanceUuid, req.requestId),
      migrationUuidFor(req.instanceUuid, req.requestId),
    ]);
    expect(cell.log.filter((l) => l.startsWith('begin'))).toHaveLength(1);
    expect(cell.casts.map((c) => c.hostList[0]?.serviceHost)).toEqual(['h3']);
  });

  it('two deliveries at once: one selection; the second waits, then casts what the first recorded', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    cell.next = async () => {
      await gate;
      return { kind: 'selected', destinations: [[sel('h2'), sel('h3')]] };
    };
    const both = Promise.all([deliver(cell, req), deliver(cell, req)]);
    await new Promise((r) => setImmediate(r));
    release();
    const outcomes = await both;
    expect(outcomes.sort()).toEqual(['cast', expect.stringMatching(/^(cast|settled)$/)]);
    expect(cell.selections).toHaveLength(1);
    expect(new Set(cell.casts.map((c) => c.hostList[0]?.serviceHost))).toEqual(new Set(['h2']));
  });

  it('the instance deleted meanwhile: its claims go (instance and migration), the intent is cleared, nothing is cast', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'migrate');
    cell.intent = req.requestId;
    cell.next = async () => {
      if (cell.instance !== undefined) cell.instance = { ...cell.instance, deleted: true };
      return { kind: 'selected', destinations: [[sel('h2')]] };
    };
    expect(await deliver(cell, req)).toBe('gone');
    expect(cell.log).toContain('release 2');
    expect(cell.casts).toEqual([]);
    expect(cell.intent).toBeUndefined();
  });
});

describe('server_action: lifecycle and unshelve', () => {
  it('stop is forwarded to the cell conductor as it is, without the scheduler', async () => {
    const cell = new FakeActionCell();
    const req = request(cell, 'stop');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.log).toEqual(['begin stop powering-off', 'cast stop []', 'intent cleared']);
    expect(cell.casts[0]).toMatchObject({ action: 'stop', migrationUuid: '', hostList: [], requestSpec: undefined });
  });

  it('a refused guard (the state changed meanwhile): the action recorded with its event in Error, the intent cleared, nothing cast', async () => {
    const cell = new FakeActionCell({ vmState: 'stopped' });
    const req = request(cell, 'stop');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('refused');
    expect(cell.log).toEqual(['refused stop', 'intent cleared']);
    expect([...(cell.actions.get(req.requestId)?.events ?? [])]).toEqual([
      ['compute_stop_instance@h1', `Error: Cannot 'stop' instance ${req.instanceUuid} while it is in vm_state stopped`],
    ]);
    expect(cell.instance?.taskState).toBeNull();
    expect(await deliver(cell, req)).toBe('settled'); // a redelivery does not retry it
    expect(cell.casts).toEqual([]);
  });

  it('hard reboot takes over a soft one in progress; a soft one does not', async () => {
    const soft = new FakeActionCell({ taskState: 'rebooting' });
    const hard = request(soft, 'reboot', { rebootType: 'HARD', requestId: 'req-hard' });
    soft.intent = hard.requestId;
    expect(await deliver(soft, hard)).toBe('cast');
    expect(soft.instance?.taskState).toBe('rebooting_hard');
    const again = new FakeActionCell({ taskState: 'rebooting' });
    const softReq = request(again, 'reboot', { rebootType: 'SOFT' });
    again.intent = softReq.requestId;
    expect(await deliver(again, softReq)).toBe('refused');
  });

  it("unshelve: a plain selection in the instance's cell (no move: the offloaded instance holds nothing), the host list kept for a recast", async () => {
    const cell = new FakeActionCell({ vmState: 'shelved_offloaded', host: null, node: null, buildHostList: [sel('stale')] });
    const req = request(cell, 'unshelve', { availabilityZone: 'az2' });
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('cast');
    expect(cell.selections[0]).toMatchObject({
      move: undefined,
      spec: { availabilityZone: 'az2', requestedDestination: { cellUuid: 'cell-1' } },
    });
    expect(cell.instance?.buildHostList.map((s) => s.serviceHost)).toEqual(['h2', 'h3']);
    expect(cell.casts[0]).toMatchObject({ action: 'unshelve', migrationUuid: '', newFlavor: undefined });
    expect([...(cell.actions.get(req.requestId)?.events ?? [])]).toEqual([['schedule_instances@sc-1', 'Success']]);
  });

  it('unshelve NoValidHost: the instance stays offloaded with no task and a fault; its (empty) claim released', async () => {
    const cell = new FakeActionCell({ vmState: 'shelved_offloaded', host: null, node: null });
    cell.next = async () => ({ kind: 'no_valid_host', failure: noValidHost });
    const req = request(cell, 'unshelve');
    cell.intent = req.requestId;
    expect(await deliver(cell, req)).toBe('no_valid_host');
    expect(cell.log).toEqual(['begin unshelve unshelving', 'select', 'release 1', 'fail', 'intent cleared']);
    expect(cell.instance).toMatchObject({ vmState: 'shelved_offloaded', taskState: null });
  });

  it('an unknown action or reboot type has no plan', () => {
    const cell = new FakeActionCell();
    expect(planServerAction(request(cell, 'pause'))).toEqual({ invalid: 'unknown server action "pause"' });
    expect(planServerAction(request(cell, 'reboot', { rebootType: 'WARM' }))).toEqual({
      invalid: 'unknown server action "reboot" (reboot_type "WARM")',
    });
    expect(planServerAction(request(cell, 'resize'))).toEqual({ invalid: 'resize without a flavor' });
  });
});
