import type { Selection } from '@cellsched/wire';
import type { FailureReport, InstanceSnapshot } from './build-attempt';
import { chooseAlternate, judgeFailureReport, maxRetriesMessage, rescheduleChange, type ReportVerdict } from './reschedule';

const sel = (host: string): Selection => ({
  computeNodeUuid: `${host}-uuid`,
  serviceHost: host,
  nodename: `${host}-node`,
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
  node: 'a-node',
  buildAttempt: 1,
  buildHostList: [sel('b'), sel('c')],
  buildRequestSpec: undefined,
  wire: { uuid: 'u1' } as InstanceSnapshot['wire'],
  ...o,
});

const report = (o: Partial<FailureReport> = {}): FailureReport => ({
  instanceUuid: 'u1',
  failedHost: 'a',
  attempt: 1,
  hostList: [sel('b'), sel('c')],
  failure: undefined,
  requestId: 'req-1',
  requestSpec: undefined,
  alternatesFrom: 'message',
  ...o,
});

/** A verdict without the snapshot it carries, for the table. */
function summary(v: ReportVerdict): string {
  if (v.kind === 'ignore') return `ignore:${v.reason}`;
  if (v.kind === 'recast')
    return `recast:${v.build.host}[${v.build.request.hostList.map((s) => s.serviceHost).join(',')}]#${v.build.request.attempt}`;
  return `retry:[${v.alternates.map((s) => s.serviceHost).join(',')}]`;
}

test.each<[string, InstanceSnapshot | undefined, FailureReport, string]>([
  ["the current attempt failed: try the message's alternates", inst(), report(), 'retry:[b,c]'],
  [
    "the watchdog's report: the row's alternates",
    inst({ buildHostList: [sel('c')] }),
    report({ hostList: [], alternatesFrom: 'row' }),
    'retry:[c]',
  ],
  ['the instance was deleted', undefined, report(), 'ignore:gone'],
  ['it already went ACTIVE', inst({ vmState: 'active' }), report(), 'ignore:settled'],
  ['it is in ERROR', inst({ vmState: 'error' }), report(), 'ignore:settled'],
  ['a report of an older attempt', inst({ buildAttempt: 3, host: 'c' }), report(), 'ignore:stale'],
  ['a report from another host for the same attempt', inst({ host: 'z' }), report(), 'ignore:stale'],
  [
    'a redelivery after the decision committed: cast the decided build again',
    inst({ buildAttempt: 2, host: 'b', buildHostList: [sel('c')] }),
    report(),
    'recast:b[b,c]#2',
  ],
  [
    'a redelivery whose next host the message does not list: nothing to re-send',
    inst({ buildAttempt: 2, host: 'x', buildHostList: [] }),
    report(),
    'ignore:repeat',
  ],
  [
    'the watchdog never re-sends (it has no message to take the Selection from)',
    inst({ buildAttempt: 2, host: 'b' }),
    report({ alternatesFrom: 'row' }),
    'ignore:repeat',
  ],
])('judgeFailureReport: %s', (_name, row, r, expected) => {
  expect(summary(judgeFailureReport(row, r))).toBe(expected);
});

test.each([
  { name: 'first alternate claims', fits: ['b', 'c'], expectHost: 'b', remaining: ['c'], skipped: [] as string[] },
  { name: 'full alternate is dropped', fits: ['c'], expectHost: 'c', remaining: [], skipped: ['b'] },
  { name: 'none fits', fits: [] as string[], expectHost: undefined, remaining: [], skipped: ['b', 'c'] },
])('chooseAlternate: $name', async ({ fits, expectHost, remaining, skipped }) => {
  const tried: string[] = [];
  const d = await chooseAlternate([sel('b'), sel('c')], async (s) => {
    tried.push(s.serviceHost);
    return fits.includes(s.serviceHost) ? { kind: 'claimed' } : { kind: 'skipped', reason: 'no capacity' };
  });
  expect(d.skipped.map((s) => s.host)).toEqual(skipped);
  if (expectHost === undefined) expect(d.kind).toBe('exhausted');
  else {
    expect(d).toMatchObject({ kind: 'rescheduled', selection: { serviceHost: expectHost } });
    if (d.kind === 'rescheduled') expect(d.remaining.map((s) => s.serviceHost)).toEqual(remaining);
  }
  expect(tried).toEqual([...skipped, ...(expectHost === undefined ? [] : [expectHost])]);
});

const NOW = new Date('2030-01-01T00:00:00Z');
const failure = {
  code: 'compute.build.rescheduled',
  message: 'spawn failed',
  retryable: true,
  expected: true,
  metadata: {},
  diagnosis: [],
};

test.each([
  {
    name: "moved to the claimed alternate, one attempt on, deadline a build timeout away, the message's spec kept",
    d: { kind: 'rescheduled' as const, selection: sel('b'), remaining: [sel('c')], skipped: [] },
    r: report({ failure, requestSpec: { projectId: 'p' } as FailureReport['requestSpec'] }),
    expected: {
      kind: 'move',
      detail: 'build on host a failed (spawn failed), rescheduled to host b',
      move: {
        host: 'b',
        node: 'b-node',
        buildAttempt: 2,
        buildDeadlineAt: new Date(NOW.getTime() + 60_000),
        buildRequestSpec: { projectId: 'p' },
      },
    },
  },
  {
    name: 'moved past a dropped alternate: the event detail names it and why',
    d: {
      kind: 'rescheduled' as const,
      selection: sel('c'),
      remaining: [],
      skipped: [{ host: 'b', reason: 'no capacity' }],
    },
    r: report({ failure }),
    expected: {
      kind: 'move',
      detail: 'build on host a failed (spawn failed), rescheduled to host c (alternates dropped: b: no capacity)',
      move: { host: 'c', node: 'c-node', buildAttempt: 2, buildHostList: [] },
    },
  },
  {
    name: "none left: ERROR with Nova's MaxRetriesExceeded, the failed host and the dropped alternates",
    d: {
      kind: 'exhausted' as const,
      skipped: [
        { host: 'b', reason: 'no capacity' },
        { host: 'c', reason: 'moved' },
      ],
    },
    r: report({ failure }),
    expected: {
      kind: 'error',
      fault: {
        message: maxRetriesMessage('u1'),
        host: 'a',
        details: 'last failure on a: spawn failed; alternates dropped: b: no capacity; c: moved',
      },
    },
  },
  {
    name: 'none at all (no alternates): the last failure only, "build failed" without a message',
    d: { kind: 'exhausted' as const, skipped: [] },
    r: report(),
    expected: { kind: 'error', fault: { message: maxRetriesMessage('u1'), host: 'a', details: 'last failure on a: build failed' } },
  },
])('rescheduleChange: $name', ({ d, r, expected }) => {
  expect(rescheduleChange(inst(), r, d, NOW, 60_000)).toMatchObject(expected);
});

test('rescheduleChange keeps the alternates after the chosen one, and casts them after it', () => {
  const c = rescheduleChange(inst(), report(), { kind: 'rescheduled', selection: sel('b'), remaining: [sel('c')], skipped: [] }, NOW, 1);
  expect(c.kind === 'move' && [c.move.buildHostList.map((s) => s.serviceHost), c.hostList.map((s) => s.serviceHost)]).toEqual([
    ['c'],
    ['b', 'c'],
  ]);
});

test("maxRetriesMessage is Nova's MaxRetriesExceeded text", () => {
  expect(maxRetriesMessage('u1')).toBe(
    'Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance u1.',
  );
});
