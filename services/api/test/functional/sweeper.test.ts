// The build request sweeper: a request whose cast was lost is re-cast (as one request for a
// multi-create), not re-cast again before recastEveryMs, and queued deletes are re-cast.
import { setInstanceMappingCell, setInstanceMappingQueuedForDelete } from '@cellsched/api-db';
import { BuildRequestSweeper } from '../../src/adapters/build-request-sweeper';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('sweeper');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

it('re-casts stale build requests once per period and leaves fresh ones alone', async () => {
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as('alice:p1'),
    payload: { server: { name: 'multi', imageRef: IMAGE, flavorRef: '1', min_count: 2, max_count: 2 } },
  });
  expect(res.statusCode).toBe(202);
  const first = await waitFor('the original cast', () => h.seen.schedule[0]);
  const sweeper = new BuildRequestSweeper(h.deps, { minAgeMs: 60_000, recastEveryMs: 60_000 });
  expect(await sweeper.sweep()).toEqual([]); // too young: its cast may still be in the queue
  const later = Date.now() + 120_000;
  const recast = await sweeper.sweep(later);
  expect(recast.sort()).toEqual(first.buildRequests.map((b) => b.instanceUuid).sort());
  const again = await waitFor('the re-cast', () => h.seen.schedule[1]);
  // the same instances; a re-cast carries no instance (the super-conductor reads the API DB: one may be placed already)
  expect(again.buildRequests).toEqual(first.buildRequests.map((b) => ({ ...b, instance: undefined })));
  expect(first.buildRequests.map((b) => b.instance?.uuid)).toEqual(first.buildRequests.map((b) => b.instanceUuid));
  // the first cast is the create's own; a re-cast may find its instances in a cell already
  expect([first.recast, again.recast]).toEqual([false, true]);
  expect(again.requestSpec).toMatchObject({ numInstances: 2, projectId: 'p1', flavor: { flavorid: '1' } });
  expect(await sweeper.sweep(later + 1000)).toEqual([]);
  expect((await sweeper.sweep(later + 61_000)).length).toBe(2);
});

it('re-casts a delete queued longer than minAgeMs (the first cast may have been lost)', async () => {
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as('bob:p2'),
    payload: { server: { name: 'gone', imageRef: IMAGE, flavorRef: '1' } },
  });
  const id = (res.json() as { server: { id: string } }).server.id;
  await setInstanceMappingCell(h.apiDb.pool, id, h.cells.cell1.id);
  await h.apiDb.pool.query('DELETE FROM build_requests WHERE instance_uuid = $1', [id]);
  await setInstanceMappingQueuedForDelete(h.apiDb.pool, id, true);
  const sweeper = new BuildRequestSweeper(h.deps, { minAgeMs: 60_000, recastEveryMs: 60_000 });
  const now = Date.now();
  expect(await sweeper.sweep(now)).not.toContain(id);
  expect(await sweeper.sweep(now + 61_000)).toContain(id);
  expect(await waitFor('delete re-cast', () => h.seen.deletes.find((d) => d.instanceUuid === id))).toMatchObject({
    cellUuid: h.cells.cell1.uuid,
    projectId: 'p2',
  });
});
