import type { CastClient } from '@cellsched/bus';
import type { CellConductorServiceService, UpdateHostStatsRequest } from '@cellsched/wire';
import { HostStatsTracker } from '../domain/host-stats';
import { simulatedHosts } from '../domain/hosts';
import { reportHostStats } from './registration';

// What each period sends (the cast's publish itself is the bus's, tested there): the changed
// hosts; every host on a full period, so a report lost after it was published is repaired.
function recorder(fail = false): { client: CastClient<typeof CellConductorServiceService>; sent: UpdateHostStatsRequest[] } {
  const sent: UpdateHostStatsRequest[] = [];
  const client = {
    cast: (method: string, req: UpdateHostStatsRequest) => {
      if (fail) return Promise.reject(new Error('publish refused'));
      if (method === 'updateHostStats') sent.push(req);
      return Promise.resolve();
    },
  } as unknown as CastClient<typeof CellConductorServiceService>;
  return { client, sent };
}

const hosts = simulatedHosts('cell1', 'h', 3);
const nodes = new Map(hosts.map((h) => [h.host, h]));

test('a period sends the changed hosts only; a full period every host; a failed publish keeps them for the next', async () => {
  const tracker = new HostStatsTracker();
  tracker.buildStarted('h2');
  tracker.buildEnded('h2', false);
  const r = recorder();
  expect(await reportHostStats(r.client, tracker, nodes, () => 0)).toBe(1);
  expect(r.sent.flatMap((s) => s.hosts)).toEqual([
    { computeNodeUuid: nodes.get('h2')?.computeNodeUuid, stats: expect.objectContaining({ failed_builds: '1' }), runningVms: 0 },
  ]);
  expect(await reportHostStats(r.client, tracker, nodes, () => 0)).toBe(0);
  expect(await reportHostStats(r.client, tracker, nodes, () => 0, true)).toBe(3);
  expect(r.sent.at(-1)?.hosts.map((h) => h.computeNodeUuid)).toEqual(hosts.map((h) => h.computeNodeUuid));
  tracker.instancesChanged('h1');
  await expect(reportHostStats(recorder(true).client, tracker, nodes, () => 1)).rejects.toThrow('publish refused');
  expect(tracker.take()).toEqual(['h1']);
});
