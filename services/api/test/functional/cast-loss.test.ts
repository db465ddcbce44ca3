// "Nothing is lost if the cast fails after the commit": with no super-conductor queue the
// cast is unroutable, the API still answers 202 (the rows are committed) and keeps retrying;
// once the super-conductor is up the cast arrives.
import { getBuildRequest } from '@cellsched/api-db';
import { as, IMAGE, startHarness, waitFor, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('castloss', { lateConductor: true });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

it('accepts the create, retries the unconfirmed cast, and delivers it once a consumer exists', async () => {
  const res = await h.inject({
    method: 'POST',
    url: '/v2.1/servers',
    headers: as('alice:p1'),
    payload: { server: { name: 'patient', imageRef: IMAGE, flavorRef: '1' } },
  });
  expect(res.statusCode).toBe(202);
  const id = (res.json() as { server: { id: string } }).server.id;
  expect(await getBuildRequest(h.apiDb.pool, id)).toBeDefined();
  expect(h.deps.retrier.size).toBe(1);
  expect(h.seen.schedule).toEqual([]);
  await h.startConductor();
  const cast = await waitFor('the retried cast', () => h.seen.schedule.find((c) => c.requestSpec?.instanceUuid === id));
  expect(cast.buildRequests.map((b) => b.instanceUuid)).toEqual([id]);
  expect(cast.recast).toBe(true); // the unconfirmed first may still arrive: the super-conductor looks in the cells
  await waitFor('the retrier to finish', () => (h.deps.retrier.size === 0 ? true : undefined));
});
