/**
 * The `same_host` and `different_host` scheduler hints (Nova's SameHostFilter and
 * DifferentHostFilter, on by default) on a real scheduler replica, real placement and cell
 * databases: where the hinted instances are is read from their claims in placement.
 */
import { randomUUID } from 'node:crypto';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let client: SchedulerClient;

beforeAll(async () => {
  cloud = await startRealCloud('sched_hints');
  // 6 identical hosts in 2 cells: without a hint, the spread weighers and the seeds pick among them all.
  await cloud.addHosts(Array.from({ length: 6 }, (_, i) => ({ host: `hh-${i}`, cell: i % 2, vcpus: 32, memoryMb: 65536, diskGb: 500 })));
  client = (await cloud.startReplica()).client;
});
afterAll(async () => {
  await cloud.close();
});

async function boot(hints: Record<string, string>, seed: number, uuid = randomUUID()): Promise<string> {
  const r = await select(client, requestSpec({ schedulerHints: hints, seed }), [uuid]);
  if (!r.ok) throw r.err;
  return r.res.destinations[0]?.selections[0]?.serviceHost ?? '';
}

test('same_host: every boot lands on the host of the hinted instance; different_host: none does', async () => {
  const first = randomUUID();
  const home = await boot({}, 1, first);
  const second = randomUUID();
  const other = await boot({ different_host: first }, 2, second);
  expect(other).not.toBe(home);
  const same = await Promise.all(Array.from({ length: 8 }, (_, i) => boot({ same_host: first }, 10 + i)));
  expect(new Set(same)).toEqual(new Set([home]));
  const apart = await Promise.all(Array.from({ length: 8 }, (_, i) => boot({ different_host: `${first},${second}` }, 20 + i)));
  expect(apart.filter((h) => h === home || h === other)).toEqual([]);
  // either instance's host will do for same_host with a list
  const either = await Promise.all(Array.from({ length: 8 }, (_, i) => boot({ same_host: `${first},${second}` }, 30 + i)));
  expect(either.every((h) => h === home || h === other)).toBe(true);
});

test('same_host naming no placed instance is NoValidHost, and says which filter removed the hosts', async () => {
  const r = await select(client, requestSpec({ schedulerHints: { same_host: randomUUID() }, seed: 3 }), [randomUUID()]);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.err.failure?.code).toBe('scheduler.no_valid_host');
  expect(JSON.stringify(r.err.failure?.diagnosis)).toContain('SameHostFilter');
});
