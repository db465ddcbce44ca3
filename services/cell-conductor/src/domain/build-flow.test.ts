/**
 * The boot's state machine in the cell over in-memory ports (no I/O): each row of a table is a
 * starting row, a report, which hosts fit in placement and which the broker refuses; the
 * expectation is the row, the claims, the casts and the events that follow.
 */
import type { Selection } from '@cellsched/wire';
import type { BuildLog, BuildPorts, BuildTransaction, CastResult, Fault, InstanceSnapshot } from '../ports';
import type { FailureReport } from './build-attempt';
import { castTerminate, onBuildAborted, onBuildFailed, onBuildSucceeded, retryStuckBuild } from './build-flow';
import type { StuckBuild } from './watchdog';

const sel = (host: string): Selection => ({
  computeNodeUuid: `${host}-uuid`,
  serviceHost: host,
  nodename: host,
  cellUuid: 'c',
  availabilityZone: '',
  allocationRequest: { json: '{}', version: '1.39' },
});

type Row = InstanceSnapshot & { fault?: Fault };

/** One cell in memory: the row, placement's answers, the broker's, and everything that happened, in order. */
class FakeCell {
  row: Row | undefined;
  readonly log: string[] = [];
  /** Transactions that took the row lock. */
  locks = 0;
  /** The server group each claim carried ('-': none). */
  readonly claimGroups: string[] = [];
  /** Hosts a claim carrying a group is refused on (another member took them). */
  groupRefused: readonly string[] = [];
  constructor(
    row: Partial<Row>,
    private readonly fits: readonly string[],
    private readonly unroutable: readonly string[] = [],
    private readonly requestId = 'req-1',
  ) {
    this.row = {
      uuid: 'u1',
      projectId: 'p',
      userId: 'u',
      vmState: 'building',
      host: 'a',
      node: 'a',
      buildAttempt: 1,
      buildHostList: [sel('b'), sel('c')],
      buildRequestSpec: undefined,
      wire: { uuid: 'u1' } as InstanceSnapshot['wire'],
      ...row,
    };
  }

  private tx(): BuildTransaction {
    const building = (): Row | undefined => (this.row?.vmState === 'building' ? this.row : undefined);
    return {
      recordEvent: async (_inst, requestId, event, host, o) => {
        if (requestId !== '') this.log.push(`event ${event} ${host ?? '-'} ${o.ok ? 'ok' : `error: ${o.details ?? ''}`}`);
      },
      createRequestId: async () => this.requestId,
      moveBuild: async (_uuid, m) => {
        const r = building();
        if (r === undefined) return undefined;
        this.row = {
          ...r,
          host: m.host,
          node: m.node,
          buildAttempt: m.buildAttempt,
          buildHostList: m.buildHostList,
          ...(m.buildRequestSpec === undefined ? {} : { buildRequestSpec: m.buildRequestSpec }),
        };
        return this.row;
      },
      failBuild: async (_uuid, fault, o) => {
        const r = building();
        if (r === undefined) return false;
        this.row = { ...r, vmState: 'error', fault, ...(o.clearHost ? { host: null, node: null } : {}), buildHostList: [] };
        return true;
      },
      activate: async (_uuid, a) => {
        const r = building();
        if (r === undefined) return false;
        this.row = { ...r, vmState: 'active', node: a.node, buildHostList: [] };
        return true;
      },
    };
  }

  ports(): BuildPorts {
    const cast =
      (what: string) =>
      async (host: string, req: { attempt: number }): Promise<CastResult> => {
        const refused = this.unroutable.includes(host);
        this.log.push(`cast ${what} ${host} #${req.attempt}${refused ? ' refused' : ''}`);
        return refused ? 'unroutable' : 'sent';
      };
    return {
      instances: {
        withLockedInstance: async (_uuid, fn) => {
          this.locks += 1;
          return fn(this.row, this.tx());
        },
        activateIfBuilding: async (a) => {
          const r = this.row;
          if (r === undefined || r.vmState !== 'building' || r.host !== a.host || r.buildAttempt !== a.attempt) return false;
          this.row = { ...r, vmState: 'active', node: a.node === '' ? r.node : a.node, buildHostList: [] };
          if (a.requestId !== '') this.log.push(`event compute_build ${a.host} ok`);
          return true;
        },
      },
      claimer: {
        claimSelection: async (c, s) => {
          this.log.push(`claim ${s.serviceHost}`);
          this.claimGroups.push(c.group?.uuid ?? '-');
          if (c.group !== undefined && this.groupRefused.includes(s.serviceHost))
            return {
              kind: 'group_policy',
              message: `group ${c.group.uuid}: another member is on ${s.serviceHost}`,
              groupUuid: c.group.uuid,
              providerUuid: undefined,
            };
          return this.fits.includes(s.serviceHost)
            ? { kind: 'claimed', consumerGeneration: 1 }
            : { kind: 'no_capacity', message: 'full', resourceClass: 'VCPU', providerUuid: undefined };
        },
        release: async () => {
          this.log.push('release');
        },
      },
      compute: { buildAndRunInstance: cast('build'), terminateInstance: cast('terminate') },
      clock: { now: () => new Date(0) },
      buildTimeoutMs: 1000,
    };
  }

  state(): string {
    const r = this.row;
    return r === undefined
      ? 'deleted'
      : `${r.vmState} on ${r.host ?? '-'} #${r.buildAttempt}${r.fault === undefined ? '' : ` fault: ${r.fault.message.slice(0, 32)}… (${r.fault.host ?? '-'})`}`;
  }
}

const quiet: BuildLog = { info: () => undefined, warn: () => undefined };
const failed = (o: Partial<FailureReport> = {}): FailureReport => ({
  instanceUuid: 'u1',
  failedHost: 'a',
  attempt: 1,
  hostList: [sel('b'), sel('c')],
  requestId: 'req-1',
  requestSpec: undefined,
  alternatesFrom: 'message',
  failure: { code: 'compute.build.rescheduled', message: 'spawn failed', retryable: true, expected: true, metadata: {}, diagnosis: [] },
  ...o,
});

test.each<[string, Partial<Row>, FailureReport, string[], string[], string, string[]]>([
  // name, row, report, placement fits, broker refuses, row after, what happened
  [
    'the first alternate fits: the claim moves there and the build is cast with the alternates left',
    {},
    failed(),
    ['b', 'c'],
    [],
    'building on b #2',
    ['event compute_build a error: spawn failed', 'claim b', 'event reschedule b ok', 'cast build b #2'],
  ],
  [
    'a full alternate is dropped, the next is used',
    {},
    failed(),
    ['c'],
    [],
    'building on c #2',
    ['event compute_build a error: spawn failed', 'claim b', 'claim c', 'event reschedule c ok', 'cast build c #2'],
  ],
  [
    'none fits: released, ERROR with MaxRetriesExceeded naming the failed host',
    {},
    failed(),
    [],
    [],
    'error on - #1 fault: Exceeded maximum number of retri… (a)',
    ['event compute_build a error: spawn failed', 'claim b', 'claim c', 'release'],
  ],
  [
    "the broker refuses the alternate's cast: that host failed too, the next alternate builds it",
    {},
    failed(),
    ['b', 'c'],
    ['b'],
    'building on c #3',
    [
      'event compute_build a error: spawn failed',
      'claim b',
      'event reschedule b ok',
      'cast build b #2 refused',
      'event compute_build b error: the broker refused the build cast to compute.b: no compute serves host b',
      'claim c',
      'event reschedule c ok',
      'cast build c #3',
    ],
  ],
  [
    'every alternate refused: ERROR, the fault naming the last refused host, nothing held',
    {},
    failed(),
    ['b', 'c'],
    ['b', 'c'],
    'error on - #3 fault: Exceeded maximum number of retri… (c)',
    [
      'event compute_build a error: spawn failed',
      'claim b',
      'event reschedule b ok',
      'cast build b #2 refused',
      'event compute_build b error: the broker refused the build cast to compute.b: no compute serves host b',
      'claim c',
      'event reschedule c ok',
      'cast build c #3 refused',
      'event compute_build c error: the broker refused the build cast to compute.c: no compute serves host c',
      'release',
    ],
  ],
  [
    'a redelivery after the decision committed casts the decided build again and claims nothing',
    { host: 'b', buildAttempt: 2, buildHostList: [sel('c')] },
    failed(),
    ['b', 'c'],
    [],
    'building on b #2',
    ['cast build b #2'],
  ],
  ['a stale report changes nothing', { host: 'c', buildAttempt: 3 }, failed(), ['b', 'c'], [], 'building on c #3', []],
  ['a report for an instance already ACTIVE changes nothing', { vmState: 'active' }, failed(), ['b', 'c'], [], 'active on a #1', []],
])('build_instances: %s', async (_name, row, report, fits, unroutable, after, happened) => {
  const cell = new FakeCell(row, fits, unroutable);
  await onBuildFailed(cell.ports(), quiet, report);
  expect(cell.state()).toBe(after);
  expect(cell.log).toEqual(happened);
});

test.each<[string, Partial<Row> | 'deleted', string, number, string, string[], number]>([
  // name, row, reporting host, attempt, row after, what happened, row locks taken
  ['building that attempt there: ACTIVE, event Success, without the lock', {}, 'a', 1, 'active on a #1', ['event compute_build a ok'], 0],
  ['a repeat of the same report: nothing', { vmState: 'active' }, 'a', 1, 'active on a #1', [], 1],
  [
    'moved on by the watchdog: the late guest is terminated',
    { host: 'b', buildAttempt: 2 },
    'a',
    1,
    'building on b #2',
    ['cast terminate a #1'],
    1,
  ],
  ['settled in ERROR meanwhile: the guest is terminated', { vmState: 'error' }, 'a', 1, 'error on a #1', ['cast terminate a #1'], 1],
  ['deleted during the build: the guest is terminated', 'deleted', 'a', 1, 'deleted', ['cast terminate a #1'], 1],
  ['a terminate nobody can take (host not served) is done', 'deleted', 'gone', 1, 'deleted', ['cast terminate gone #1 refused'], 1],
])('build_succeeded: %s', async (_name, row, host, attempt, after, happened, locks) => {
  const cell = new FakeCell(row === 'deleted' ? {} : row, [], ['gone']);
  if (row === 'deleted') cell.row = undefined;
  await onBuildSucceeded(cell.ports(), quiet, { instanceUuid: 'u1', host, attempt, node: '', requestId: 'req-1' });
  expect(cell.state()).toBe(after);
  expect(cell.log).toEqual(happened);
  expect(cell.locks).toBe(locks);
});

test.each<[string, Partial<Row>, string, string[]]>([
  [
    "building that attempt: released, ERROR with the compute's fault, host kept",
    {},
    'error on a #1 fault: no room for you… (a)',
    ['release', 'event compute_build a error: no room for you'],
  ],
  ['settled meanwhile: nothing', { vmState: 'active' }, 'active on a #1', []],
])('build_aborted: %s', async (_name, row, after, happened) => {
  const cell = new FakeCell(row, []);
  const failure = {
    code: 'compute.build.aborted',
    message: 'no room for you',
    retryable: false,
    expected: true,
    metadata: {},
    diagnosis: [],
  };
  await onBuildAborted(cell.ports(), quiet, { instanceUuid: 'u1', host: 'a', attempt: 1, requestId: 'req-1', failure });
  expect(cell.state()).toBe(after);
  expect(cell.log).toEqual(happened);
});

const stuck = (o: Partial<StuckBuild>): StuckBuild => ({ uuid: 'u1', host: 'a', attempt: 1, hostDown: false, hostGone: false, ...o });

test.each<[string, StuckBuild, Partial<Row>, string, string[]]>([
  [
    "on a gone host: retried on the row's alternates at once, nothing to terminate there",
    stuck({ hostGone: true, hostDown: true }),
    {},
    'building on b #2',
    [
      'event compute_build a error: host a is gone (its compute service was deleted or forced down)',
      'claim b',
      'event reschedule b ok',
      'cast build b #2',
    ],
  ],
  [
    'lost in flight on a live host: retried, and the old attempt terminated there',
    stuck({}),
    { buildHostList: [sel('c')] },
    'building on c #2',
    [
      'event compute_build a error: no build result from host a a build timeout after the deadline',
      'claim c',
      'event reschedule c ok',
      'cast build c #2',
      'cast terminate a #1',
    ],
  ],
  [
    'the compute reported a failure meanwhile (another attempt now): no retry, nothing terminated',
    stuck({ hostDown: true }),
    { host: 'b', buildAttempt: 2 },
    'building on b #2',
    [],
  ],
  [
    "the compute's success committed meanwhile (ACTIVE on a #1): no retry, its guest is kept",
    stuck({}),
    { vmState: 'active' },
    'active on a #1',
    [],
  ],
])('watchdog: %s', async (_name, s, row, after, happened) => {
  const cell = new FakeCell(row, ['b', 'c']);
  await retryStuckBuild(cell.ports(), quiet, s);
  expect(cell.state()).toBe(after);
  expect(cell.log).toEqual(happened);
});

test('castTerminate says whether the terminate was queued', async () => {
  const cell = new FakeCell({}, [], ['gone']);
  await expect(castTerminate(cell.ports(), quiet, 'gone', { instanceUuid: 'u1', attempt: 1, reason: 'x' })).resolves.toBe('unroutable');
  await expect(castTerminate(cell.ports(), quiet, 'a', { instanceUuid: 'u1', attempt: 1, reason: 'x' })).resolves.toBe('sent');
});

test('build_instances of a server group member: every claim carries the group; an alternate the policy forbids now is dropped like a full one', async () => {
  const group = {
    uuid: 'g1',
    name: 'g',
    policy: 'anti-affinity',
    rules: {},
    members: [],
    hosts: [],
    maxServerPerHost: 1,
    userId: 'u',
    projectId: 'p',
  };
  const cell = new FakeCell({ buildRequestSpec: { instanceGroup: group } as unknown as InstanceSnapshot['buildRequestSpec'] }, ['b', 'c']);
  cell.groupRefused = ['b'];
  await onBuildFailed(cell.ports(), quiet, failed());
  expect(cell.state()).toBe('building on c #2');
  expect(cell.claimGroups).toEqual(['g1', 'g1']);
  expect(cell.log).toEqual(['event compute_build a error: spawn failed', 'claim b', 'claim c', 'event reschedule c ok', 'cast build c #2']);
  const none = new FakeCell({}, ['b']);
  await onBuildFailed(none.ports(), quiet, failed());
  expect(none.claimGroups).toEqual(['-']);
});

test('build_instances of a group member whose every alternate the policy forbids: ERROR, the fault saying why each was dropped', async () => {
  const group = {
    uuid: 'g1',
    name: 'g',
    policy: 'anti-affinity',
    rules: {},
    members: [],
    hosts: [],
    maxServerPerHost: 1,
    userId: 'u',
    projectId: 'p',
  };
  const cell = new FakeCell({ buildRequestSpec: { instanceGroup: group } as unknown as InstanceSnapshot['buildRequestSpec'] }, ['b', 'c']);
  cell.groupRefused = ['b', 'c'];
  await onBuildFailed(cell.ports(), quiet, failed());
  expect(cell.row?.vmState).toBe('error');
  expect(cell.row?.fault?.details).toBe(
    'last failure on a: spawn failed; alternates dropped: b: group g1: another member is on b; c: group g1: another member is on c',
  );
});
