/**
 * The perfload gate jobs' data, generated once and loaded identically into every target
 * through the REST API (as placeload / nested-perfload.yaml do), so the candidate sets of
 * the targets can be compared uuid for uuid.
 */
import { randomUUID } from 'node:crypto';
import { pool, type PlacementHttp } from './http';

export const AGGREGATES = [
  '14a5c8a3-5a99-4e8f-88be-00d85fcb1c17',
  '66d98e7c-3c25-485d-a0dc-1cea651884de',
  'a59dbb28-fd98-4c6e-9ec5-ae5f3d04b0aa',
];
const TRAITS = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD'];
const FLAT_INVENTORY = {
  MEMORY_MB: { total: 8192, min_unit: 128, max_unit: 8192 },
  DISK_GB: { total: 8192, min_unit: 5, max_unit: 8192 },
  VCPU: { total: 32, min_unit: 1, max_unit: 16 },
};

/** The timed query of the placement-perfload job. */
export const FLAT_QUERY = `resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=${AGGREGATES[0]}&required=HW_CPU_X86_AVX2`;
/** The timed query of the placement-nested-perfload job. */
export const NESTED_QUERY =
  'resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO' +
  '&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA';

/** One provider to create: parent first in the list. */
export interface ProviderLoad {
  readonly uuid: string;
  readonly name: string;
  readonly parent?: string;
  readonly inventories?: Record<string, Record<string, number>>;
  readonly aggregates?: string[];
  readonly traits?: string[];
}

/** N flat compute nodes, aggregates and traits cycling 1..3 as placeload does. */
export function flatProviders(n: number): ProviderLoad[][] {
  return Array.from({ length: n }, (_, i) => {
    const uuid = randomUUID();
    return [
      { uuid, name: uuid, inventories: FLAT_INVENTORY, aggregates: AGGREGATES.slice(0, (i % 3) + 1), traits: TRAITS.slice(0, (i % 3) + 1) },
    ];
  });
}

/** N trees of 7 providers (gate/gabbits/nested-perfload.yaml). */
export function nestedProviders(n: number): ProviderLoad[][] {
  return Array.from({ length: n }, (): ProviderLoad[] => {
    const u = {
      cn: randomUUID(),
      n0: randomUUID(),
      n1: randomUUID(),
      f00: randomUUID(),
      f10: randomUUID(),
      f11: randomUUID(),
      g00: randomUUID(),
    };
    return [
      { uuid: u.cn, name: u.cn, inventories: { DISK_GB: { total: 20480 } }, traits: ['COMPUTE_VOLUME_MULTI_ATTACH'] },
      {
        uuid: u.n0,
        name: `numa 0-${u.n0}`,
        parent: u.cn,
        inventories: { VCPU: { total: 4, reserved: 2 }, MEMORY_MB: { total: 2048, min_unit: 512, step_size: 256 } },
        traits: ['HW_NUMA_ROOT'],
      },
      { uuid: u.f00, name: `fpga0-0-${u.f00}`, parent: u.n0, inventories: { FPGA: { total: 1 } } },
      { uuid: u.g00, name: `pgpu0-0-${u.g00}`, parent: u.n0, inventories: { VGPU: { total: 8 } } },
      {
        uuid: u.n1,
        name: `numa 1-${u.n1}`,
        parent: u.cn,
        inventories: { VCPU: { total: 4 }, MEMORY_MB: { total: 2048, min_unit: 256, max_unit: 1024 } },
        traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO'],
      },
      { uuid: u.f10, name: `fpga1-0-${u.f10}`, parent: u.n1, inventories: { FPGA: { total: 1 } } },
      { uuid: u.f11, name: `fpga1-1-${u.f11}`, parent: u.n1, inventories: { FPGA: { total: 1 } } },
    ];
  });
}

async function createOne(http: PlacementHttp, p: ProviderLoad): Promise<void> {
  await http.must('POST', '/resource_providers', { uuid: p.uuid, name: p.name, ...(p.parent ? { parent_provider_uuid: p.parent } : {}) });
  let gen = 0;
  if (p.inventories)
    await http.must('PUT', `/resource_providers/${p.uuid}/inventories`, {
      resource_provider_generation: gen++,
      inventories: p.inventories,
    });
  if (p.aggregates)
    await http.must('PUT', `/resource_providers/${p.uuid}/aggregates`, { resource_provider_generation: gen++, aggregates: p.aggregates });
  if (p.traits) await http.must('PUT', `/resource_providers/${p.uuid}/traits`, { resource_provider_generation: gen++, traits: p.traits });
}

/** Loads every tree (providers of a tree in order, trees `concurrency` at a time); seconds taken. */
export async function load(http: PlacementHttp, trees: readonly ProviderLoad[][], concurrency: number): Promise<number> {
  if (trees.some((t) => t.some((p) => p.traits?.includes('CUSTOM_FOO'))))
    await http.must('PUT', '/traits/CUSTOM_FOO', undefined, [201, 204]);
  const started = Date.now();
  await pool(trees, concurrency, async (tree) => {
    for (const p of tree) await createOne(http, p);
  });
  return (Date.now() - started) / 1000;
}
