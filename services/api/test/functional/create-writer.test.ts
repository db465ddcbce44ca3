// The api's group commit of creates (CreateWriter) against a real PostgreSQL API DB: concurrent
// creates share statements and each is written whole; a lone create goes at once; a create the
// database refuses fails alone, its batch's others are written; bad input fails before any write.
import { randomUUID } from 'node:crypto';
import {
  API_DB_MIGRATIONS_DIR,
  createInstanceGroup,
  getFlavorByFlavorId,
  getInstanceGroup,
  getInstanceMappingsWithBuildRequests,
  getRequestSpec,
  toWireFlavor,
  type NewServerRecord,
} from '@cellsched/api-db';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import { Instance, RequestSpec, VmState } from '@cellsched/wire';
import { CreateWriter } from '../../src/adapters/create-writer';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'api_create_writer', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

async function server(projectId: string, name: string): Promise<NewServerRecord> {
  const f = await getFlavorByFlavorId(db.pool, '1');
  if (f === undefined) throw new Error('m1.tiny missing');
  const flavor = toWireFlavor(f);
  const uuid = randomUUID();
  return {
    spec: RequestSpec.fromPartial({ instanceUuid: uuid, projectId, userId: 'u1', flavor, numInstances: 1, requestId: `req-${name}` }),
    instance: Instance.fromPartial({
      uuid,
      projectId,
      userId: 'u1',
      displayName: name,
      flavor,
      vmState: VmState.VM_STATE_BUILDING,
      taskState: 'scheduling',
    }),
  };
}

/** [uuid, project, user, build request's name] of each server, as the API DB has them. */
async function written(servers: readonly NewServerRecord[]): Promise<unknown[]> {
  const uuids = servers.map((s) => s.instance.uuid);
  const rows = await getInstanceMappingsWithBuildRequests(db.pool, uuids);
  const specs = await Promise.all(uuids.map((u) => getRequestSpec(db.pool, u)));
  return uuids.map((u, i) => {
    const r = rows.find((x) => x.mapping.instanceUuid === u);
    return [u, r?.mapping.projectId, r?.mapping.userId, r?.mapping.cell, r?.buildRequest?.instance.displayName, specs[i]?.instanceUuid];
  });
}

const expected = (servers: readonly NewServerRecord[], project: (i: number) => string): unknown[] =>
  servers.map((s, i) => [s.instance.uuid, project(i), 'u1', undefined, s.instance.displayName, s.instance.uuid]);

test('creates arriving together share statements; each is written whole, with its own project and group', async () => {
  const w = new CreateWriter(db.pool);
  const { group } = await createInstanceGroup(db.pool, { name: 'g', policy: 'affinity', projectId: 'p0', userId: 'u1' });
  const servers = await Promise.all(Array.from({ length: 40 }, (_, i) => server(`p${i % 3}`, `vm-${i}`)));
  await Promise.all(
    servers.map((s, i) => w.write([s], { projectId: `p${i % 3}`, userId: 'u1', groupUuid: i === 0 ? group.uuid : undefined })),
  );
  expect(await written(servers)).toEqual(expected(servers, (i) => `p${i % 3}`));
  expect((await getInstanceGroup(db.pool, group.uuid))?.members).toEqual([servers[0]?.instance.uuid]);
  expect(w.stats.writes).toBe(40);
  // queued in one task: all in one statement
  expect(w.stats).toMatchObject({ statements: 1, batches: 1, batchedWrites: 40, largestBatch: 40, fallbacks: 0 });
});

test('a lone create is written at once, in its own statement; at most maxBatch creates go together', async () => {
  const w = new CreateWriter(db.pool, 4);
  const one = await server('p1', 'lone');
  await w.write([one], { projectId: 'p1', userId: 'u1' });
  expect(await written([one])).toEqual(expected([one], () => 'p1'));
  expect(w.stats).toMatchObject({ writes: 1, statements: 1, batches: 0 });
  const ten = await Promise.all(Array.from({ length: 10 }, (_, i) => server('p1', `b-${i}`)));
  await Promise.all(ten.map((s) => w.write([s], { projectId: 'p1', userId: 'u1' })));
  expect(await written(ten)).toEqual(expected(ten, () => 'p1'));
  expect(w.stats).toMatchObject({ writes: 11, statements: 4, largestBatch: 4 });
});

test('a create the database refuses fails alone: the others of its batch are written', async () => {
  const w = new CreateWriter(db.pool);
  const servers = await Promise.all(Array.from({ length: 6 }, (_, i) => server('p2', `ok-${i}`)));
  // NOTE: jsonb refuses a NUL character: this create's rows fail the statement they are in
  const bad = await server('p2', 'x');
  const refused = { ...bad, instance: { ...bad.instance, displayName: 'nul\u0000name' } };
  const results = await Promise.allSettled([
    w.write([servers[0] as NewServerRecord], { projectId: 'p2', userId: 'u1' }),
    ...servers.slice(1, 3).map((s) => w.write([s], { projectId: 'p2', userId: 'u1' })),
    w.write([refused], { projectId: 'p2', userId: 'u1' }),
    ...servers.slice(3).map((s) => w.write([s], { projectId: 'p2', userId: 'u1' })),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  expect(String((results[3] as PromiseRejectedResult).reason)).toMatch(/unsupported Unicode escape sequence/);
  expect(await written(servers)).toEqual(expected(servers, () => 'p2'));
  expect(await getInstanceMappingsWithBuildRequests(db.pool, [refused.instance.uuid])).toEqual([]);
  // one statement for the seven, then each alone
  expect(w.stats).toMatchObject({ batches: 1, fallbacks: 1, statements: 8 });
});

test('bad input is refused before it joins a batch, nothing written', async () => {
  const w = new CreateWriter(db.pool);
  const s = await server('p3', 'y');
  await expect(w.write([s], { projectId: 'other' })).rejects.toMatchObject({ code: 'api_db.build_request.invalid' });
  await expect(w.write([s], { projectId: 'p3', traceParent: 'nope' })).rejects.toMatchObject({ code: 'api_db.build_request.invalid' });
  expect(await getInstanceMappingsWithBuildRequests(db.pool, [s.instance.uuid])).toEqual([]);
  expect(w.stats).toMatchObject({ writes: 0, statements: 0 });
  expect(() => new CreateWriter(db.pool, 0)).toThrow(/maxBatch/);
});
