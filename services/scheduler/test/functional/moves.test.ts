/**
 * Scheduling a move against the real placement service: SelectDestinations with a MoveContext
 * claims the destination with ClaimMove (the source allocation goes to the migration consumer in
 * the same write), stays in the instance's cell, never picks the source, and undoes itself with
 * RevertMove on NoValidHost.
 */
import { randomUUID } from 'node:crypto';
import type { Destination, MoveContext, RequestSpec, SelectDestinationsResponse } from '@cellsched/wire';
import { placementUsage, type SeededHost } from '../../../../e2e/bench/scheduler/seed';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let client: SchedulerClient;
let hosts: SeededHost[];

const size = { vcpus: 4, memoryMb: 8192, diskGb: 100 };

beforeAll(async () => {
  cloud = await startRealCloud('sched_mv');
  hosts = await cloud.addHosts(Array.from({ length: 6 }, (_, i) => ({ host: `mv-${i}`, cell: i % 2, ...size })));
  ({ client } = await cloud.startReplica());
});
afterAll(async () => {
  await cloud.close();
});

async function selectMove(
  spec: RequestSpec,
  instance: string,
  m: Omit<MoveContext, 'force'> & { force?: boolean },
  numAlternates = 2,
): Promise<{ ok: true; res: SelectDestinationsResponse } | { ok: false; err: Error & { failure?: { code: string } } }> {
  try {
    const move: MoveContext = { force: false, ...m };
    return {
      ok: true,
      res: await client.selectDestinations({
        requestSpec: spec,
        instanceUuids: [instance],
        numAlternates,
        allocationRequestVersion: '1.36',
        move,
      }),
    };
  } catch (err) {
    return { ok: false, err: err as Error & { failure?: { code: string } } };
  }
}

/** Boots an instance (a plain claim) and returns where it landed. */
async function boot(): Promise<{ uuid: string; host: SeededHost; cellUuid: string }> {
  const uuid = randomUUID();
  const r = await select(client, requestSpec(), [uuid]);
  if (!r.ok) throw r.err;
  const chosen = r.res.destinations[0]?.selections[0];
  const host = hosts.find((h) => h.uuid === chosen?.computeNodeUuid);
  if (host === undefined || chosen === undefined) throw new Error('boot landed nowhere known');
  return { uuid, host, cellUuid: chosen.cellUuid };
}

const inCell = (cellUuid: string, host = ''): Destination => ({ host, node: '', cellUuid, aggregates: [], allowCrossCellMove: false });

test("a move claims the destination with ClaimMove: instance on the destination, migration on the source, in the instance's cell", async () => {
  const vm = await boot();
  const migration = randomUUID();
  const move = { migrationUuid: migration, sourceHost: vm.host.host, sourceNode: vm.host.host, allowSameHost: false };
  const r = await selectMove(requestSpec({ instanceUuid: vm.uuid, requestedDestination: inCell(vm.cellUuid) }), vm.uuid, move);
  if (!r.ok) throw r.err;
  const [chosen, ...alternates] = r.res.destinations[0]?.selections ?? [];
  expect(chosen?.serviceHost).not.toBe(vm.host.host);
  for (const s of [chosen, ...alternates]) expect(s?.cellUuid).toBe(vm.cellUuid);
  expect(alternates.map((a) => a.serviceHost)).not.toContain(vm.host.host);
  expect(alternates).toHaveLength(1); // 3 hosts in the cell: the source, the chosen one, one alternate
  let usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([chosen?.computeNodeUuid]);
  expect(usage.consumers.get(migration)).toEqual([vm.host.uuid]);

  // a retry of the same move (a redelivered cast) replaces the destination only
  const again = await selectMove(
    requestSpec({ instanceUuid: vm.uuid, requestedDestination: inCell(vm.cellUuid), seed: 99 }),
    vm.uuid,
    move,
  );
  if (!again.ok) throw again.err;
  usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([again.res.destinations[0]?.selections[0]?.computeNodeUuid]);
  expect(usage.consumers.get(migration)).toEqual([vm.host.uuid]);
  expect(usage.overCapacity).toEqual([]);

  // and a retry that meets NoValidHost (a host of the other cell requested) reverts the move
  const other = hosts.find((h) => h.cell !== vm.host.cell) as SeededHost;
  const none = await selectMove(
    requestSpec({ instanceUuid: vm.uuid, requestedDestination: inCell(vm.cellUuid, other.host) }),
    vm.uuid,
    move,
  );
  expect(none.ok).toBe(false);
  if (!none.ok) expect(none.err.failure?.code).toBe('scheduler.no_valid_host');
  usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([vm.host.uuid]);
  expect(usage.consumers.has(migration)).toBe(false);
});

test('a requested host in the cell is the only candidate; the source is refused unless same-host is allowed', async () => {
  const vm = await boot();
  const target = hosts.find((h) => h.cell === vm.host.cell && h.host !== vm.host.host) as SeededHost;
  const m1 = randomUUID();
  const r = await selectMove(requestSpec({ instanceUuid: vm.uuid, requestedDestination: inCell(vm.cellUuid, target.host) }), vm.uuid, {
    migrationUuid: m1,
    sourceHost: vm.host.host,
    sourceNode: vm.host.host,
    allowSameHost: false,
  });
  if (!r.ok) throw r.err;
  expect(r.res.destinations[0]?.selections.map((s) => s.serviceHost)).toEqual([target.host]);
  expect((await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid)).toEqual([target.uuid]);

  // now on `target`: a move to its own host is NoValidHost, and allowed with allow_same_host (resize to the same host)
  const m2 = randomUUID();
  const pinned = requestSpec({ instanceUuid: vm.uuid, requestedDestination: inCell(vm.cellUuid, target.host) });
  const refused = await selectMove(pinned, vm.uuid, {
    migrationUuid: m2,
    sourceHost: target.host,
    sourceNode: target.host,
    allowSameHost: false,
  });
  expect(refused.ok).toBe(false);
  const same = await selectMove(pinned, vm.uuid, {
    migrationUuid: m2,
    sourceHost: target.host,
    sourceNode: target.host,
    allowSameHost: true,
  });
  if (!same.ok) throw same.err;
  const usage = await placementUsage(cloud.placementDb.pool);
  expect(usage.consumers.get(vm.uuid)).toEqual([target.uuid]);
  expect(usage.consumers.get(m2)).toEqual([target.uuid]);
  expect(usage.consumers.get(m1)).toEqual([vm.host.uuid]); // the first move's migration still holds its source (not confirmed here)
});

test('a malformed move is INVALID_ARGUMENT and changes nothing', async () => {
  const vm = await boot();
  const r = await selectMove(requestSpec({ instanceUuid: vm.uuid }), vm.uuid, {
    migrationUuid: '',
    sourceHost: vm.host.host,
    sourceNode: '',
    allowSameHost: false,
  });
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.err.failure?.code).toBe('scheduler.request.invalid');
  expect((await placementUsage(cloud.placementDb.pool)).consumers.get(vm.uuid)).toEqual([vm.host.uuid]);
});
