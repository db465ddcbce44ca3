/**
 * Functional tests of allocation candidates over provider trees (NUMA-like compute nodes
 * with network PFs) and sharing providers: nested combinations and their exclusion
 * before 1.29, granular groups with isolate/none, same_subtree (also resourceless),
 * root_required, in_tree, and forbidden traits over trees (where real Placement 8.0 on
 * PostgreSQL answers 500).
 */
import type { TestDatabase } from '@cellsched/db';
import { placementTestDatabase, ProviderBuilder, type ProviderRef, type ProviderSpec } from './candidates-fixture';
import { ask, describe_ as shape, summarized } from './candidates-helpers';

const AGG = '14a5c8a3-5a99-4e8f-88be-00d85fcb1c17';
let db: TestDatabase;
let b: ProviderBuilder;
const names = new Map<string, string>();
const refs = new Map<string, ProviderRef>();

async function rp(name: string, spec: ProviderSpec = {}): Promise<ProviderRef> {
  const ref = await b.provider(name, spec);
  names.set(ref.uuid, name);
  refs.set(name, ref);
  return ref;
}

/** cn{n} (DISK) -> numa0 (VCPU, MEM) -> pf0 (VF); cn{n} -> numa1 (VCPU, MEM, CUSTOM_FOO) -> pf1 (VF). */
async function computeTree(n: string, rootTraits: string[] = []): Promise<void> {
  const cn = await rp(`cn${n}`, { inventories: { DISK_GB: { total: 100 } }, traits: rootTraits });
  const numa = { VCPU: { total: 4 }, MEMORY_MB: { total: 2048 } };
  const n0 = await rp(`cn${n}.numa0`, { parent: cn, inventories: numa, traits: ['HW_NUMA_ROOT'] });
  const n1 = await rp(`cn${n}.numa1`, { parent: cn, inventories: numa, traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO'] });
  await rp(`cn${n}.pf0`, { parent: n0, inventories: { SRIOV_NET_VF: { total: 2 } }, traits: ['CUSTOM_PHYSNET_A'] });
  await rp(`cn${n}.pf1`, { parent: n1, inventories: { SRIOV_NET_VF: { total: 2 } }, traits: ['CUSTOM_PHYSNET_A'] });
}

beforeAll(async () => {
  db = await placementTestDatabase('candidates_nested');
  b = new ProviderBuilder(db.pool);
});
afterAll(async () => {
  await db.drop();
});
beforeEach(async () => {
  await b.clear();
  names.clear();
  refs.clear();
});

describe('nested providers', () => {
  test('1.29+: resources of the unsuffixed group may come from several providers of a tree', async () => {
    await computeTree('1');
    const body = await ask(db.pool, 'resources=VCPU:2,MEMORY_MB:1024', 29);
    expect(shape(body, names)).toEqual([
      'cn1.numa0:MEMORY_MB=1024 + cn1.numa0:VCPU=2',
      'cn1.numa0:MEMORY_MB=1024 + cn1.numa1:VCPU=2',
      'cn1.numa0:VCPU=2 + cn1.numa1:MEMORY_MB=1024',
      'cn1.numa1:MEMORY_MB=1024 + cn1.numa1:VCPU=2',
    ]);
    expect(summarized(body, names)).toEqual(['cn1', 'cn1.numa0', 'cn1.numa1', 'cn1.pf0', 'cn1.pf1']);
    expect(body.provider_summaries[refs.get('cn1.pf0')?.uuid ?? '']?.parent_provider_uuid).toBe(refs.get('cn1.numa0')?.uuid);
  });

  test('before 1.29: one provider per tree, summaries of used providers only', async () => {
    await computeTree('1');
    const body = await ask(db.pool, 'resources=VCPU:2,MEMORY_MB:1024', 28);
    expect(shape(body, names)).toEqual(['cn1.numa0:MEMORY_MB=1024 + cn1.numa0:VCPU=2', 'cn1.numa1:MEMORY_MB=1024 + cn1.numa1:VCPU=2']);
    expect(summarized(body, names)).toEqual(['cn1.numa0', 'cn1.numa1']);
  });

  test('required traits are met by the providers of the candidate together', async () => {
    await computeTree('1', ['HW_CPU_X86_AVX2']);
    const body = await ask(db.pool, 'resources=VCPU:1,SRIOV_NET_VF:1&required=CUSTOM_FOO,CUSTOM_PHYSNET_A', 29);
    expect(shape(body, names)).toEqual(['cn1.numa1:VCPU=1 + cn1.pf0:SRIOV_NET_VF=1', 'cn1.numa1:VCPU=1 + cn1.pf1:SRIOV_NET_VF=1']);
    // NOTE: a trait of a provider that contributes no resource does not count (as in Placement).
    expect(await ask(db.pool, 'resources=VCPU:1&required=HW_CPU_X86_AVX2', 29)).toEqual({
      allocation_requests: [],
      provider_summaries: {},
    });
  });

  test('forbidden traits over trees exclude only the providers carrying them', async () => {
    await computeTree('1');
    expect(shape(await ask(db.pool, 'resources=VCPU:1&required=!CUSTOM_FOO', 29), names)).toEqual(['cn1.numa0:VCPU=1']);
    const body = await ask(db.pool, 'resources=VCPU:1,SRIOV_NET_VF:1&required=!CUSTOM_FOO', 29);
    expect(shape(body, names)).toEqual(['cn1.numa0:VCPU=1 + cn1.pf0:SRIOV_NET_VF=1', 'cn1.numa0:VCPU=1 + cn1.pf1:SRIOV_NET_VF=1']);
  });

  test('granular groups: isolate needs distinct providers, none may stack them', async () => {
    await computeTree('1');
    const q = 'resources1=VCPU:2,MEMORY_MB:1024&resources2=VCPU:2,MEMORY_MB:1024';
    const isolate = await ask(db.pool, `${q}&group_policy=isolate`, 34);
    expect(isolate.allocation_requests).toHaveLength(2);
    expect(isolate.allocation_requests.map((a) => Object.keys(a.allocations).length)).toEqual([2, 2]);
    const mappings = isolate.allocation_requests.map(
      (a) => `${names.get(a.mappings?.['1']?.[0] ?? '')}|${names.get(a.mappings?.['2']?.[0] ?? '')}`,
    );
    expect(mappings.sort()).toEqual(['cn1.numa0|cn1.numa1', 'cn1.numa1|cn1.numa0']);
    const none = await ask(db.pool, `${q}&group_policy=none`, 34);
    expect(shape(none, names)).toContain('cn1.numa0:MEMORY_MB=2048 + cn1.numa0:VCPU=4');
    expect(none.allocation_requests).toHaveLength(4);
    // stacking past capacity is filtered after the merge
    expect((await ask(db.pool, 'resources1=VCPU:3&resources2=VCPU:3&group_policy=none', 34)).allocation_requests).toHaveLength(2);
  });

  test('same_subtree: groups under one provider of the subtree, resourceless groups too', async () => {
    await computeTree('1');
    const q = 'resources_COMPUTE=VCPU:1&resources_NET=SRIOV_NET_VF:1&group_policy=none&same_subtree=_COMPUTE,_NET';
    expect(shape(await ask(db.pool, q), names)).toEqual([
      'cn1.numa0:VCPU=1 + cn1.pf0:SRIOV_NET_VF=1',
      'cn1.numa1:VCPU=1 + cn1.pf1:SRIOV_NET_VF=1',
    ]);
    const resourceless = await ask(
      db.pool,
      'resources_NET=SRIOV_NET_VF:1&required_NUMA=CUSTOM_FOO&same_subtree=_NET,_NUMA&group_policy=none',
    );
    expect(shape(resourceless, names)).toEqual(['cn1.pf1:SRIOV_NET_VF=1']);
    expect(resourceless.allocation_requests[0]?.mappings?._NUMA).toEqual([refs.get('cn1.numa1')?.uuid]);
  });

  test('root_required and in_tree restrict the trees', async () => {
    await computeTree('1', ['COMPUTE_STATUS_DISABLED']);
    await computeTree('2');
    const enabled = await ask(db.pool, 'resources=VCPU:4&root_required=!COMPUTE_STATUS_DISABLED');
    expect(shape(enabled, names)).toEqual(['cn2.numa0:VCPU=4', 'cn2.numa1:VCPU=4']);
    expect(summarized(enabled, names).every((n) => n.startsWith('cn2'))).toBe(true);
    const inTree = await ask(db.pool, `resources=VCPU:4&in_tree=${refs.get('cn1.pf1')?.uuid ?? ''}`);
    expect(shape(inTree, names)).toEqual(['cn1.numa0:VCPU=4', 'cn1.numa1:VCPU=4']);
  });
});

describe('sharing providers', () => {
  beforeEach(async () => {
    const cn = { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 } };
    await rp('cn1', { inventories: cn, aggregates: [AGG] });
    await rp('cn2', { inventories: cn, aggregates: [AGG] });
    await rp('cn3', { inventories: { ...cn, DISK_GB: { total: 50 } } });
    await rp('ss', { inventories: { DISK_GB: { total: 1000 } }, aggregates: [AGG], traits: ['MISC_SHARES_VIA_AGGREGATE'] });
  });

  test('a shared disk completes the compute nodes of its aggregate', async () => {
    const body = await ask(db.pool, 'resources=VCPU:1,DISK_GB:10');
    expect(shape(body, names)).toEqual(['cn1:VCPU=1 + ss:DISK_GB=10', 'cn2:VCPU=1 + ss:DISK_GB=10', 'cn3:DISK_GB=10 + cn3:VCPU=1']);
    expect(summarized(body, names)).toEqual(['cn1', 'cn2', 'cn3', 'ss']);
    expect(shape(await ask(db.pool, `resources=VCPU:1,DISK_GB:10&member_of=${AGG}`), names)).toHaveLength(2);
    expect(shape(await ask(db.pool, 'resources=VCPU:1,DISK_GB:100'), names)).toEqual([
      'cn1:VCPU=1 + ss:DISK_GB=100',
      'cn2:VCPU=1 + ss:DISK_GB=100',
    ]);
  });

  test('a granular group may be served by the sharing provider', async () => {
    const body = await ask(db.pool, 'resources1=VCPU:1&resources2=DISK_GB:10&group_policy=none');
    expect(shape(body, names)).toEqual(['cn1:VCPU=1 + ss:DISK_GB=10', 'cn2:VCPU=1 + ss:DISK_GB=10', 'cn3:DISK_GB=10 + cn3:VCPU=1']);
  });
});
