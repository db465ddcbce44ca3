import { randomUUID } from 'node:crypto';
import { startPlacement, type PlacementHarness } from './api-helpers';

// Resource classes, traits, aggregates and the reshaper as one ordered story.
describe('placement classes, traits, aggregates, reshaper', () => {
  let p: PlacementHarness;
  const root = randomUUID();
  const numa = randomUUID();
  const agg = randomUUID();
  const vm = randomUUID();
  beforeAll(async () => {
    p = await startPlacement('placement_misc');
    await p.call('POST', '/resource_providers', { name: 'cn', uuid: root });
    await p.call('POST', '/resource_providers', { name: 'cn_numa0', uuid: numa, parent_provider_uuid: root });
  });
  afterAll(async () => {
    await p.close();
  });

  it("ships the standard classes (in Placement's fixed id order) and traits", async () => {
    const rcs = (await p.call('GET', '/resource_classes')).json.resource_classes.map((r: { name: string }) => r.name);
    expect(rcs.slice(0, 3)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB']);
    expect(rcs).toHaveLength(21);
    expect((await p.call('GET', '/traits?name=startswith:HW_CPU_X86_AVX')).json.traits).toContain('HW_CPU_X86_AVX2');
  });

  it('creates custom classes and traits idempotently and refuses standard ones', async () => {
    expect((await p.call('PUT', '/resource_classes/CUSTOM_GPU')).status).toBe(201);
    expect((await p.call('PUT', '/resource_classes/CUSTOM_GPU')).status).toBe(204);
    expect((await p.call('DELETE', '/resource_classes/VCPU')).status).toBe(400);
    expect((await p.call('PUT', '/traits/CUSTOM_FAST')).status).toBe(201);
    expect((await p.call('PUT', '/traits/NOT_CUSTOM')).status).toBe(400);
  });

  it('sets provider traits and aggregates with generation checks, and filters providers by them', async () => {
    const t = await p.call('PUT', `/resource_providers/${root}/traits`, {
      traits: ['CUSTOM_FAST', 'HW_CPU_X86_AVX2'],
      resource_provider_generation: 0,
    });
    expect(t.json.resource_provider_generation).toBe(1);
    const stale = await p.call('PUT', `/resource_providers/${root}/aggregates`, { aggregates: [agg], resource_provider_generation: 0 });
    expect(stale.json.errors[0].code).toBe('placement.concurrent_update');
    const a = await p.call('PUT', `/resource_providers/${root}/aggregates`, { aggregates: [agg], resource_provider_generation: 1 });
    expect(a.json).toEqual({ aggregates: [agg], resource_provider_generation: 2 });
    const both = await p.call('GET', `/resource_providers?required=CUSTOM_FAST&member_of=${agg}`);
    expect(both.json.resource_providers.map((r: { uuid: string }) => r.uuid)).toEqual([root]);
    const forbidden = await p.call('GET', '/resource_providers?required=!CUSTOM_FAST');
    expect(forbidden.json.resource_providers.map((r: { uuid: string }) => r.uuid)).toEqual([numa]);
    expect((await p.call('DELETE', '/traits/CUSTOM_FAST')).status).toBe(409);
  });

  it('reshapes inventory and allocations from the root to its NUMA child in one transaction', async () => {
    await p.call('PUT', `/resource_providers/${root}/inventories`, {
      resource_provider_generation: 2,
      inventories: { VCPU: { total: 8 } },
    });
    await p.call(
      'PUT',
      `/allocations/${vm}`,
      { allocations: { [root]: { resources: { VCPU: 2 } } }, project_id: 'p', user_id: 'u', consumer_generation: null },
      { version: '1.37' },
    );
    const rootGen = (await p.call('GET', `/resource_providers/${root}`)).json.generation;
    const r = await p.call('POST', '/reshaper', {
      inventories: {
        [root]: { resource_provider_generation: rootGen, inventories: {} },
        [numa]: { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } },
      },
      allocations: {
        [vm]: {
          allocations: { [numa]: { resources: { VCPU: 2 } } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: 1,
          consumer_type: 'INSTANCE',
        },
      },
    });
    expect(r.status).toBe(204);
    expect((await p.call('GET', `/resource_providers/${root}/inventories`)).json.inventories).toEqual({});
    expect((await p.call('GET', `/allocations/${vm}`)).json.allocations[numa].resources).toEqual({ VCPU: 2 });
    expect((await p.call('GET', `/resource_providers/${numa}/usages`)).json.usages).toEqual({ VCPU: 2 });
  });
});
