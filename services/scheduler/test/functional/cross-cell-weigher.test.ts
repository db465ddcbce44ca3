/**
 * CrossCellWeigher (a default weigher, as in Nova's all_weighers) on real scheduler replicas,
 * real placement and cell databases: a move that may leave its cell
 * (`requested_destination.allow_cross_cell_move`) stays in the instance's cell when that cell has
 * room, although the spread weighers prefer the other cell's bigger hosts.
 */
import { randomUUID } from 'node:crypto';
import type { MoveContext, RequestSpec } from '@cellsched/wire';
import { DEFAULT_POLICY } from '../../src/domain/policy';
import { type RealCloud, type SchedulerClient, requestSpec, select, startRealCloud } from '../support/real-cloud';

let cloud: RealCloud;
let withWeigher: SchedulerClient;
let withoutWeigher: SchedulerClient;

beforeAll(async () => {
  cloud = await startRealCloud('sched_xcell');
  // cell 0: 3 small hosts; cell 1: 2 big ones (RAM, CPU and disk weighers all prefer them)
  await cloud.addHosts([
    ...Array.from({ length: 3 }, (_, i) => ({ host: `home-${i}`, cell: 0, vcpus: 8, memoryMb: 16384, diskGb: 100 })),
    ...Array.from({ length: 2 }, (_, i) => ({ host: `away-${i}`, cell: 1, vcpus: 64, memoryMb: 262144, diskGb: 2000 })),
  ]);
  withWeigher = (await cloud.startReplica()).client;
  withoutWeigher = (await cloud.startReplica({ enabledWeighers: DEFAULT_POLICY.enabledWeighers.filter((w) => w !== 'CrossCellWeigher') }))
    .client;
});
afterAll(async () => {
  await cloud.close();
});

const cell0 = (): string => cloud.cells[0]?.uuid ?? '';

/** Boots an instance into cell 0 (the request names the cell) and returns its uuid and host. */
async function bootInCell0(): Promise<{ uuid: string; host: string }> {
  const uuid = randomUUID();
  const r = await select(
    withWeigher,
    requestSpec({ requestedDestination: { host: '', node: '', cellUuid: cell0(), aggregates: [], allowCrossCellMove: false } }),
    [uuid],
  );
  if (!r.ok) throw r.err;
  return { uuid, host: r.res.destinations[0]?.selections[0]?.serviceHost ?? '' };
}

/** Schedules a move of `vm` that may leave cell 0; returns the chosen host's cell. */
async function crossCellMove(client: SchedulerClient, vm: { uuid: string; host: string }, seed: number): Promise<string> {
  const spec: RequestSpec = requestSpec({
    instanceUuid: vm.uuid,
    seed,
    requestedDestination: { host: '', node: '', cellUuid: cell0(), aggregates: [], allowCrossCellMove: true },
  });
  const move: MoveContext = { migrationUuid: randomUUID(), sourceHost: vm.host, sourceNode: vm.host, allowSameHost: false, force: false };
  const res = await client.selectDestinations({
    requestSpec: spec,
    instanceUuids: [vm.uuid],
    numAlternates: 1,
    allocationRequestVersion: '1.36',
    move,
  });
  return res.destinations[0]?.selections[0]?.cellUuid ?? '';
}

test("a cross-cell move stays in the instance's cell when it has room; without CrossCellWeigher it leaves for the bigger hosts", async () => {
  const home = await Promise.all([1, 2].map(() => bootInCell0()));
  const withIt = await Promise.all(home.map((vm, i) => crossCellMove(withWeigher, vm, 10 + i)));
  expect(withIt).toEqual([cell0(), cell0()]);

  const away = await Promise.all([1, 2].map(() => bootInCell0()));
  const withoutIt = await Promise.all(away.map((vm, i) => crossCellMove(withoutWeigher, vm, 20 + i)));
  expect(withoutIt).toEqual([cloud.cells[1]?.uuid, cloud.cells[1]?.uuid]);
});
