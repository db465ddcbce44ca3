import type { Instance, RequestSpec, Selection } from '@cellsched/wire';
import type { CastResult, CellBuildPorts, ConductorLog } from '../ports';
import {
  castFirstBuild,
  firstBuild,
  noConductorFault,
  refusedBuildReport,
  resumeStep,
  type FirstBuild,
  type ResumeState,
} from './first-build';

const sel = (host: string): Selection => ({
  computeNodeUuid: `${host}-uuid`,
  serviceHost: host,
  nodename: host,
  cellUuid: 'c1',
  availabilityZone: '',
  allocationRequest: { json: '{}', version: '1.36' },
});
const instance = { uuid: 'u1' } as Instance;
const spec = { projectId: 'p' } as RequestSpec;
const build = firstBuild(instance, 1, 'cell1', [sel('a'), sel('b'), sel('c')], spec, 'req-1') as FirstBuild;

test('firstBuild: attempt 1 on the chosen host, the whole host list in the cast; none without a host', () => {
  expect(build).toMatchObject({
    instanceUuid: 'u1',
    cellName: 'cell1',
    host: 'a',
    request: { instance, requestSpec: spec, attempt: 1, requestId: 'req-1' },
  });
  expect(build.request.hostList.map((s) => s.serviceHost)).toEqual(['a', 'b', 'c']);
  expect(firstBuild(instance, 1, 'cell1', [], spec, 'req-1')).toBeUndefined();
});

test('refusedBuildReport: the chosen host failed attempt 1; the cell conductor gets the alternates after it', () => {
  const r = refusedBuildReport(build);
  expect(r).toMatchObject({
    instance,
    requestSpec: spec,
    failedHost: 'a',
    attempt: 1,
    requestId: 'req-1',
    failure: {
      code: 'super_conductor.build.unroutable',
      message: 'the broker refused the build cast to compute.a: no compute serves host a',
      retryable: true,
      expected: true,
    },
  });
  expect(r.hostList.map((s) => s.serviceHost)).toEqual(['b', 'c']);
  expect(noConductorFault(build)).toEqual({
    message: 'Build of instance u1 could not start: no compute serves host a and cell cell1 has no conductor to retry it',
    details: 'super_conductor.build.unroutable',
  });
});

/** In-memory ports: which casts the broker refuses; everything done, in order. */
function fakePorts(refused: { compute?: boolean; conductor?: boolean }) {
  const done: string[] = [];
  const result = (no: boolean | undefined): CastResult => (no === true ? 'unroutable' : 'sent');
  const ports: CellBuildPorts = {
    cell: {
      buildAndRunInstance: async (host, r) => {
        done.push(`build ${host} #${r.attempt}`);
        return result(refused.compute);
      },
      buildInstances: async (r) => {
        done.push(`build_instances failed ${r.failedHost} [${r.hostList.map((s) => s.serviceHost).join(',')}]`);
        return result(refused.conductor);
      },
      terminateInstance: async () => 'sent',
    },
    builds: {
      failBuild: async (uuid, host, requestId, fault) => {
        done.push(`ERROR ${uuid} on ${host} (${requestId}): ${fault.details}`);
        return true;
      },
    },
    claims: {
      release: async (uuids) => {
        done.push(`release ${uuids.join(',')}`);
      },
    },
  };
  const logged: string[] = [];
  const log: ConductorLog = {
    info: (_f, m) => logged.push(`info ${m}`),
    warn: (_f, m) => logged.push(`warn ${m}`),
    error: (_f, m) => logged.push(`error ${m}`),
  };
  return { ports, done, log, logged };
}

test.each<[string, { compute?: boolean; conductor?: boolean }, string, string[]]>([
  ['the compute takes it', {}, 'cast', ['build a #1']],
  [
    "the broker refuses it: handed to the cell conductor as that host's failure",
    { compute: true },
    'rescheduled',
    ['build a #1', 'build_instances failed a [b,c]'],
  ],
  [
    'refused, and the cell has no conductor queue either: claim released, ERROR with a fault saying so',
    { compute: true, conductor: true },
    'error',
    ['build a #1', 'build_instances failed a [b,c]', 'release u1', 'ERROR u1 on a (req-1): super_conductor.build.unroutable'],
  ],
])('castFirstBuild: %s', async (_name, refused, outcome, done) => {
  const f = fakePorts(refused);
  await expect(castFirstBuild(f.ports, f.log, build)).resolves.toBe(outcome);
  expect(f.done).toEqual(done);
});

const resume = (o: Partial<ResumeState>): ResumeState => ({
  buildRequestRemovedNow: true,
  mappedBefore: false,
  queuedForDelete: false,
  cellHasBus: true,
  vmState: 'building',
  buildAttempt: 1,
  host: 'a',
  ...o,
});

test.each<[string, ResumeState, ReturnType<typeof resumeStep>]>([
  ['the previous delivery crashed before the cast: cast again', resume({}), 'recast'],
  [
    'mapped before, build request already gone: still building attempt 1, cast again',
    resume({ buildRequestRemovedNow: false, mappedBefore: true }),
    'recast',
  ],
  [
    'the build request was gone before this delivery and the mapping not ours: the user deleted it',
    resume({ buildRequestRemovedNow: false }),
    'clean_up',
  ],
  [
    'mapped, but queued for delete: the user deleted it',
    resume({ buildRequestRemovedNow: false, mappedBefore: true, queuedForDelete: true }),
    'clean_up',
  ],
  ['the cell conductor moved it on (attempt 2)', resume({ buildAttempt: 2 }), 'settled'],
  ['it is ACTIVE', resume({ vmState: 'active' }), 'settled'],
  ['it went to ERROR without a host', resume({ vmState: 'error', host: null }), 'settled'],
  ['buried in cell0 (no bus)', resume({ cellHasBus: false, buildRequestRemovedNow: false }), 'settled'],
])('resumeStep: %s', (_name, s, expected) => {
  expect(resumeStep(s)).toBe(expected);
});
