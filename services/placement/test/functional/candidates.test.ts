/**
 * Functional tests of the allocation-candidates search against a real PostgreSQL:
 * simple, nested (NUMA-like), sharing, granular with isolate, same_subtree,
 * root_required, forbidden traits over trees, member_of, limit.
 */
import type { TestDatabase } from '@cellsched/db';
import { placementTestDatabase, ProviderBuilder, type ProviderRef } from './candidates-fixture';
import { ask, describe_ as shape, summarized } from './candidates-helpers';

const AGG_A = '14a5c8a3-5a99-4e8f-88be-00d85fcb1c17';
const AGG_B = '66d98e7c-3c25-485d-a0dc-1cea651884de';

let db: TestDatabase;
let b: ProviderBuilder;
const names = new Map<string, string>();

async function rp(name: string, spec: Parameters<ProviderBuilder['provider']>[1] = {}): Promise<ProviderRef> {
  const ref = await b.provider(name, spec);
  names.set(ref.uuid, name);
  return ref;
}

beforeAll(async () => {
  db = await placementTestDatabase('candidates');
  b = new ProviderBuilder(db.pool);
});
afterAll(async () => {
  await db.drop();
});
beforeEach(async () => {
  await b.clear();
  names.clear();
});

const CN_INV = { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, DISK_GB: { total: 100 } };

describe('flat providers', () => {
  test('only providers with capacity for every class, with usage in summaries', async () => {
    const cn1 = await rp('cn1', { inventories: CN_INV });
    await rp('cn2', { inventories: { VCPU: { total: 1 }, MEMORY_MB: { total: 4096 } } });
    await rp('cn3', { inventories: { ...CN_INV, VCPU: { total: 8, max_unit: 1 } } });
    await b.allocate(cn1, 'VCPU', 3);
    const body = await ask(db.pool, 'resources=VCPU:2,MEMORY_MB:1024');
    expect(shape(body, names)).toEqual(['cn1:MEMORY_MB=1024 + cn1:VCPU=2']);
    expect(summarized(body, names)).toEqual(['cn1']);
    expect(body.provider_summaries[cn1.uuid]?.resources.VCPU).toEqual({ capacity: 8, used: 3 });
    expect(body.provider_summaries[cn1.uuid]?.resources.DISK_GB).toEqual({ capacity: 100, used: 0 });
  });

  test('capacity honours reserved, allocation_ratio, min_unit and step_size', async () => {
    await rp('ratio', { inventories: { VCPU: { total: 4, reserved: 1, allocation_ratio: 2, max_unit: 8 } } });
    await rp('step', { inventories: { VCPU: { total: 16, step_size: 4 } } });
    await rp('min', { inventories: { VCPU: { total: 16, min_unit: 8 } } });
    expect(shape(await ask(db.pool, 'resources=VCPU:6'), names)).toEqual(['ratio:VCPU=6']);
    expect(shape(await ask(db.pool, 'resources=VCPU:8'), names)).toEqual(['min:VCPU=8', 'step:VCPU=8']);
    expect(shape(await ask(db.pool, 'resources=VCPU:7'), names)).toEqual([]);
  });

  test('limit keeps N candidates and only their summaries', async () => {
    for (let i = 0; i < 5; i++) await rp(`cn${i}`, { inventories: CN_INV });
    const body = await ask(db.pool, 'resources=VCPU:1&limit=2');
    expect(body.allocation_requests).toHaveLength(2);
    expect(Object.keys(body.provider_summaries)).toHaveLength(2);
  });

  test('member_of: all of the listed sets, in: any of, ! none of', async () => {
    await rp('a', { inventories: CN_INV, aggregates: [AGG_A] });
    await rp('ab', { inventories: CN_INV, aggregates: [AGG_A, AGG_B] });
    await rp('none', { inventories: CN_INV });
    expect(shape(await ask(db.pool, `resources=VCPU:1&member_of=${AGG_A}`), names)).toEqual(['a:VCPU=1', 'ab:VCPU=1']);
    expect(shape(await ask(db.pool, `resources=VCPU:1&member_of=${AGG_A}&member_of=${AGG_B}`), names)).toEqual(['ab:VCPU=1']);
    expect(shape(await ask(db.pool, `resources=VCPU:1&member_of=in:${AGG_B},${AGG_A}`), names)).toHaveLength(2);
    expect(shape(await ask(db.pool, `resources=VCPU:1&member_of=!${AGG_B}`), names)).toEqual(['a:VCPU=1', 'none:VCPU=1']);
    expect(shape(await ask(db.pool, `resources=VCPU:1&member_of=!in:${AGG_A},${AGG_B}`), names)).toEqual(['none:VCPU=1']);
  });

  test('required and forbidden traits, and in: any-of at 1.39', async () => {
    await rp('avx', { inventories: CN_INV, traits: ['HW_CPU_X86_AVX2'] });
    await rp('sse', { inventories: CN_INV, traits: ['HW_CPU_X86_SSE2'] });
    await rp('plain', { inventories: CN_INV });
    expect(shape(await ask(db.pool, 'resources=VCPU:1&required=HW_CPU_X86_AVX2'), names)).toEqual(['avx:VCPU=1']);
    expect(shape(await ask(db.pool, 'resources=VCPU:1&required=!HW_CPU_X86_AVX2'), names)).toEqual(['plain:VCPU=1', 'sse:VCPU=1']);
    expect(shape(await ask(db.pool, 'resources=VCPU:1&required=in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE2'), names)).toEqual([
      'avx:VCPU=1',
      'sse:VCPU=1',
    ]);
  });
});

describe('snapshot cache', () => {
  test('every committed change is seen by the next search', async () => {
    const cn = await rp('cn1', { inventories: { VCPU: { total: 2 } } });
    expect(shape(await ask(db.pool, 'resources=VCPU:2'), names)).toEqual(['cn1:VCPU=2']);
    await b.allocate(cn, 'VCPU', 1);
    expect(shape(await ask(db.pool, 'resources=VCPU:2'), names)).toEqual([]);
    expect((await ask(db.pool, 'resources=VCPU:1')).provider_summaries[cn.uuid]?.resources.VCPU?.used).toBe(1);
    await db.pool.query('UPDATE inventories SET total = 3');
    expect(shape(await ask(db.pool, 'resources=VCPU:2'), names)).toEqual(['cn1:VCPU=2']);
    await expect(ask(db.pool, 'resources=VCPU:1&required=CUSTOM_LATE')).rejects.toThrow('No such trait(s): CUSTOM_LATE.');
    await db.pool.query("INSERT INTO traits (name) VALUES ('CUSTOM_LATE')");
    await db.pool.query("INSERT INTO resource_provider_traits SELECT $1, id FROM traits WHERE name = 'CUSTOM_LATE'", [cn.id]);
    expect(shape(await ask(db.pool, 'resources=VCPU:1&required=CUSTOM_LATE'), names)).toEqual(['cn1:VCPU=1']);
  });

  test('concurrent searches after a change share one reload and all see the change', async () => {
    const cn = await rp('cn1', { inventories: { VCPU: { total: 8 } } });
    await ask(db.pool, 'resources=VCPU:1');
    await b.allocate(cn, 'VCPU', 5);
    const bodies = await Promise.all(Array.from({ length: 8 }, () => ask(db.pool, 'resources=VCPU:1')));
    for (const body of bodies) expect(body.provider_summaries[cn.uuid]?.resources.VCPU?.used).toBe(5);
  });

  test('unknown names answer Placement 400 texts', async () => {
    await rp('cn1', { inventories: { VCPU: { total: 2 } } });
    await expect(ask(db.pool, 'resources=MCPU:1')).rejects.toThrow(
      'Invalid resource class in resources parameter: No such resource class MCPU.',
    );
    await expect(ask(db.pool, 'resources=VCPU:1&required=CUSTOM_NOPE')).rejects.toThrow('No such trait(s): CUSTOM_NOPE.');
    await expect(ask(db.pool, 'resources=VCPU:1&limit=0', 16)).rejects.toThrow("Failed validating 'pattern'");
    await expect(ask(db.pool, 'resources1=VCPU:1&resources2=VCPU:1', 25)).rejects.toThrow('The "group_policy" parameter is required');
  });
});
