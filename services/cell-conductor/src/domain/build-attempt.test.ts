import type { Selection } from '@cellsched/wire';
import { abortFault, judgeAbort, judgeSuccess, normalizeAttempt, type InstanceSnapshot, type SuccessVerdict } from './build-attempt';
import { buildCastFor, refusedCastReport } from './build-cast';
import { stuckBuildReport, stuckFailure, terminatesOldAttempt, type StuckBuild } from './watchdog';

const sel = (host: string): Selection => ({
  computeNodeUuid: `${host}-uuid`,
  serviceHost: host,
  nodename: host,
  cellUuid: 'c',
  availabilityZone: '',
  allocationRequest: { json: '{}', version: '1.39' },
});
const inst = (o: Partial<InstanceSnapshot> = {}): InstanceSnapshot => ({
  uuid: 'u1',
  projectId: 'p',
  userId: 'u',
  vmState: 'building',
  host: 'a',
  node: 'a',
  buildAttempt: 2,
  buildHostList: [sel('c')],
  buildRequestSpec: undefined,
  wire: { uuid: 'u1' } as InstanceSnapshot['wire'],
  ...o,
});

test.each([
  [0, 1],
  [1, 1],
  [3, 3],
])('normalizeAttempt(%i) = %i (0: an older sender that did not set it)', (given, expected) => {
  expect(normalizeAttempt(given)).toBe(expected);
});

test.each<[string, InstanceSnapshot | undefined, string, number, SuccessVerdict, boolean]>([
  // name, row, reporting host, attempt, build_succeeded verdict, build_aborted applies
  ['building that attempt there', inst(), 'a', 2, 'apply', true],
  ['already ACTIVE from that report (a repeat)', inst({ vmState: 'active' }), 'a', 2, 'repeat', false],
  ['in ERROR meanwhile', inst({ vmState: 'error' }), 'a', 2, 'stale', false],
  ['deleted', undefined, 'a', 2, 'stale', false],
  ['moved on to another host', inst({ host: 'b', buildAttempt: 3 }), 'a', 2, 'stale', false],
  ['an older attempt on the same host', inst(), 'a', 1, 'stale', false],
  ['ACTIVE elsewhere: a late success of a moved-on attempt is stale', inst({ vmState: 'active', host: 'b' }), 'a', 2, 'stale', false],
])('a result report when the row is %s', (_name, row, host, attempt, success, abort) => {
  expect(judgeSuccess(row, { host, attempt })).toBe(success);
  expect(judgeAbort(row, { host, attempt })).toBe(abort);
});

test("abortFault: the compute's message and code; Nova's default text without a failure", () => {
  expect(
    abortFault({ code: 'compute.build.aborted', message: 'no', retryable: false, expected: true, metadata: {}, diagnosis: [] }, 'a'),
  ).toEqual({ message: 'no', host: 'a', details: 'compute.build.aborted' });
  expect(abortFault(undefined, 'a')).toEqual({ message: 'Build of instance aborted', host: 'a', details: null });
});

test("buildCastFor: the row's attempt on its host with the given host list; none without a host", () => {
  expect(buildCastFor(inst(), [sel('a'), sel('c')], 'req')).toMatchObject({
    instanceUuid: 'u1',
    host: 'a',
    request: { attempt: 2, requestId: 'req', instance: { uuid: 'u1' } },
  });
  expect(buildCastFor(inst({ host: null }), [], 'req')).toBeUndefined();
});

test('refusedCastReport: the refused host failed that attempt; the alternates are the ones the cast carried after it', () => {
  const cast = buildCastFor(inst(), [sel('a'), sel('c')], 'req');
  const r = refusedCastReport(cast as NonNullable<typeof cast>);
  expect(r).toMatchObject({
    instanceUuid: 'u1',
    failedHost: 'a',
    attempt: 2,
    requestId: 'req',
    alternatesFrom: 'message',
    failure: {
      code: 'cell_conductor.build.unroutable',
      message: 'the broker refused the build cast to compute.a: no compute serves host a',
      retryable: true,
      expected: true,
    },
  });
  expect(r.hostList.map((s) => s.serviceHost)).toEqual(['c']);
});

const stuck = (o: Partial<StuckBuild>): StuckBuild => ({ uuid: 'u1', host: 'a', attempt: 2, hostDown: false, hostGone: false, ...o });

test.each([
  [
    'gone (deleted or forced down)',
    stuck({ hostGone: true, hostDown: true }),
    'cell_conductor.build.host_gone',
    'host a is gone (its compute service was deleted or forced down)',
    false,
  ],
  ['down past the deadline', stuck({ hostDown: true }), 'cell_conductor.build.host_down', 'build deadline passed and host a is down', true],
  [
    'alive but silent a build timeout past the deadline',
    stuck({}),
    'cell_conductor.build.timed_out',
    'no build result from host a a build timeout after the deadline',
    true,
  ],
])('watchdog, host %s: its failure, and whether the old attempt is terminated there', (_name, s, code, message, terminate) => {
  expect(stuckFailure(s)).toMatchObject({ code, message, retryable: true, expected: true });
  expect(terminatesOldAttempt(s, true)).toBe(terminate);
  expect(terminatesOldAttempt(s, false)).toBe(false);
  expect(stuckBuildReport(s, 'req')).toMatchObject({
    failedHost: 'a',
    attempt: 2,
    hostList: [],
    requestId: 'req',
    requestSpec: undefined,
    alternatesFrom: 'row',
    failure: { code },
  });
});
