/**
 * GET /allocation_candidates through the REST app: the shapes of each microversion,
 * Placement's error bodies and codes, cache headers, and answers that follow every
 * committed change (the per-snapshot body cache).
 */
import type { TestDatabase } from '@cellsched/db';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/adapters/http/app';
import { placementTestDatabase, ProviderBuilder, type ProviderRef } from './candidates-fixture';

let db: TestDatabase;
let app: FastifyInstance;
let cn: ProviderRef;
let base: string;

async function get(
  query: string,
  version: string,
): Promise<{ status: number; json: Record<string, unknown>; headers: Record<string, unknown> }> {
  const res = await fetch(`${base}/allocation_candidates?${query}`, {
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': `placement ${version}` },
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: Object.fromEntries(res.headers) };
}

beforeAll(async () => {
  db = await placementTestDatabase('candidates_http');
  app = buildApp({ pool: db.pool });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  const b = new ProviderBuilder(db.pool);
  cn = await b.provider('cn1', { inventories: { VCPU: { total: 4 }, DISK_GB: { total: 100 } }, traits: ['HW_CPU_X86_AVX2'] });
});
afterAll(async () => {
  await app.close();
  await db.drop();
});

test('each microversion answers its shape', async () => {
  expect((await get('resources=VCPU:1', '1.9')).status).toBe(404);
  const v10 = await get('resources=VCPU:1', '1.10');
  expect(v10.json).toEqual({
    allocation_requests: [{ allocations: [{ resource_provider: { uuid: cn.uuid }, resources: { VCPU: 1 } }] }],
    provider_summaries: { [cn.uuid]: { resources: { VCPU: { capacity: 4, used: 0 } } } },
  });
  expect(v10.headers['cache-control']).toBeUndefined();
  const v17 = await get('resources=VCPU:1', '1.17');
  expect(v17.json.allocation_requests).toEqual([{ allocations: { [cn.uuid]: { resources: { VCPU: 1 } } } }]);
  expect(v17.json.provider_summaries).toEqual({
    [cn.uuid]: { resources: { VCPU: { capacity: 4, used: 0 } }, traits: ['HW_CPU_X86_AVX2'] },
  });
  expect(v17.headers['cache-control']).toBe('no-cache');
  const latest = await get('resources=VCPU:1', 'latest');
  expect(latest.json.allocation_requests).toEqual([
    { allocations: { [cn.uuid]: { resources: { VCPU: 1 } } }, mappings: { '': [cn.uuid] } },
  ]);
  expect(latest.json.provider_summaries).toEqual({
    [cn.uuid]: {
      resources: { VCPU: { capacity: 4, used: 0 }, DISK_GB: { capacity: 100, used: 0 } },
      traits: ['HW_CPU_X86_AVX2'],
      parent_provider_uuid: null,
      root_provider_uuid: cn.uuid,
    },
  });
});

test('bad queries answer 400 with Placement text and code', async () => {
  const dup = await get('resources=VCPU:1&root_required=A&root_required=B', '1.35');
  expect(dup.status).toBe(400);
  const [err] = dup.json.errors as { code: string; detail: string }[];
  expect(err?.code).toBe('placement.query.duplicate_key');
  expect(err?.detail).toContain("Query parameter 'root_required' may be specified only once.");
  expect((await get('resources=VCPU:1&foo=bar', '1.36')).status).toBe(400);
});

test('answers follow committed changes', async () => {
  expect(((await get('resources=VCPU:4', 'latest')).json.allocation_requests as unknown[]).length).toBe(1);
  await db.pool.query(
    'INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES ($1, gen_random_uuid(), 0, 1)',
    [cn.id],
  );
  expect(((await get('resources=VCPU:4', 'latest')).json.allocation_requests as unknown[]).length).toBe(0);
  await db.pool.query('DELETE FROM allocations');
  expect(((await get('resources=VCPU:4', 'latest')).json.allocation_requests as unknown[]).length).toBe(1);
});
