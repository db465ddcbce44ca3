/**
 * The race from the issue, CI size: 4 real scheduler replicas (gRPC servers with their own pools
 * and caches) and 200 concurrent single-instance requests into a cloud that fits 150 → exactly
 * 150 claims, 50 NoValidHost, no provider over capacity, no consumer with two claims. The full
 * size (2,000 into 1,500, replicas as separate processes) runs with `pnpm bench scheduler --race`.
 */
import { randomUUID } from 'node:crypto';
import { placementUsage } from '../../../../e2e/bench/scheduler/seed';
import type { SchedulerApp } from '../../src/app';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let clients: SchedulerClient[];
let apps: SchedulerApp[];

beforeAll(async () => {
  cloud = await startRealCloud('sched_race', { placementPoolMax: 30 });
  await cloud.addHosts(Array.from({ length: 15 }, (_, i) => ({ host: `r-${i}`, cell: i % 2, vcpus: 10, memoryMb: 65536, diskGb: 1000 })));
  clients = [];
  apps = [];
  for (let i = 0; i < 4; i++) {
    const r = await cloud.startReplica({ hostSubsetSize: 5 });
    clients.push(r.client);
    apps.push(r.app);
  }
});
afterAll(async () => {
  await cloud.close();
});

test('200 concurrent requests into room for 150 over 4 replicas: exactly 150 claims, 50 NoValidHost', async () => {
  const consumers = Array.from({ length: 200 }, () => randomUUID());
  const started = Date.now();
  const results = await Promise.all(consumers.map((c, i) => select(clients[i % 4] as SchedulerClient, requestSpec({ seed: i + 1 }), [c])));
  const ms = Date.now() - started;
  const ok = consumers.filter((_, i) => results[i]?.ok === true);
  const failures = results.flatMap((r) => (r.ok ? [] : [r.err]));
  expect(failures.filter((e) => e.failure?.code !== 'scheduler.no_valid_host')).toEqual([]);
  expect(ok).toHaveLength(150);
  expect(failures).toHaveLength(50);
  const usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.overCapacity).toEqual([]);
  expect([...usage.consumers.keys()].sort()).toEqual([...ok].sort());
  expect([...usage.consumers.values()].every((providers) => providers.length === 1)).toBe(true);
  const retries = results.reduce(
    (n, r) =>
      n +
      (r.ok
        ? r.res.claimRetries
        : Number((r.err.failure as { metadata?: Record<string, string> } | undefined)?.metadata?.claim_retries ?? 0)),
    0,
  );
  process.stdout.write(
    `race: 200 requests, 4 replicas, ${ms} ms, ${ok.length} claims, ${failures.length} NoValidHost, ${retries} conflict retries; claims refused for capacity: ${apps.reduce((n, a) => n + a.claimer.stats.noCapacity, 0)}\n`,
  );
}, 120_000);
