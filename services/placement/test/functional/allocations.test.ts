import { randomUUID } from 'node:crypto';
import { startPlacement, type PlacementHarness } from './api-helpers';

// Inventories, claims, moves and usages as one ordered story.
describe('placement inventories and allocations', () => {
  let p: PlacementHarness;
  const rp = randomUUID();
  const dest = randomUUID();
  const vm = randomUUID();
  const migration = randomUUID();
  const project = randomUUID();
  const user = randomUUID();
  const claim = (resources: Record<string, number>, gen: number | null, target = rp) => ({
    allocations: { [target]: { resources } },
    project_id: project,
    user_id: user,
    consumer_generation: gen,
    consumer_type: 'INSTANCE',
  });
  beforeAll(async () => {
    p = await startPlacement('placement_alloc');
    await p.call('POST', '/resource_providers', { name: 'src', uuid: rp });
    await p.call('POST', '/resource_providers', { name: 'dest', uuid: dest });
  });
  afterAll(async () => {
    await p.close();
  });

  it('sets inventories with the generation and refuses a stale one (placement.concurrent_update)', async () => {
    const inv = { VCPU: { total: 8, allocation_ratio: 2.0, max_unit: 8 }, MEMORY_MB: { total: 4096, reserved: 512, step_size: 256 } };
    const ok = await p.call('PUT', `/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: inv });
    expect(ok.status).toBe(200);
    expect(ok.json.resource_provider_generation).toBe(1);
    expect(ok.json.inventories.MEMORY_MB).toEqual({
      total: 4096,
      reserved: 512,
      min_unit: 1,
      max_unit: 2147483647,
      step_size: 256,
      allocation_ratio: 1.0,
    });
    const stale = await p.call('PUT', `/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: inv });
    expect(stale.status).toBe(409);
    expect(stale.json.errors[0].code).toBe('placement.concurrent_update');
    await p.call('PUT', `/resource_providers/${dest}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 4 } },
    });
  });

  it('claims within (total - reserved) * ratio and bumps the provider generation', async () => {
    expect((await p.call('PUT', `/allocations/${vm}`, claim({ VCPU: 4, MEMORY_MB: 1024 }, null))).status).toBe(204);
    const got = await p.call('GET', `/allocations/${vm}`);
    expect(got.json).toMatchObject({ project_id: project, user_id: user, consumer_generation: 1, consumer_type: 'INSTANCE' });
    expect(got.json.allocations[rp]).toEqual({ generation: 2, resources: { VCPU: 4, MEMORY_MB: 1024 } });
  });

  it('refuses a claim beyond capacity with a 409 naming the class and provider, writing nothing', async () => {
    const over = await p.call('PUT', `/allocations/${randomUUID()}`, claim({ VCPU: 8, MEMORY_MB: 3072 }, null));
    expect(over.status).toBe(409);
    expect(over.json.errors[0].detail).toContain(
      `Unable to create allocation for 'MEMORY_MB' on resource provider '${rp}'. The requested amount would exceed the capacity.`,
    );
    const step = await p.call('PUT', `/allocations/${randomUUID()}`, claim({ MEMORY_MB: 100 }, null));
    expect(step.json.errors[0].detail).toContain('would violate inventory constraints');
    const usages = await p.call('GET', `/resource_providers/${rp}/usages`);
    expect(usages.json.usages).toEqual({ VCPU: 4, MEMORY_MB: 1024 });
  });

  it('rejects a stale consumer generation', async () => {
    const r = await p.call('PUT', `/allocations/${vm}`, claim({ VCPU: 2 }, 0));
    expect(r.status).toBe(409);
    expect(r.json.errors[0]).toMatchObject({ code: 'placement.concurrent_update' });
    expect(r.json.errors[0].detail).toContain('consumer generation conflict - expected 1 but got 0');
  });

  it('protects inventory in use (placement.inventory.inuse)', async () => {
    const r = await p.call('DELETE', `/resource_providers/${rp}/inventories`);
    expect(r.status).toBe(409);
    expect(r.json.errors[0].code).toBe('placement.inventory.inuse');
    // One class: Placement 8.0 answers concurrent_update, not inventory.inuse.
    const one = await p.call('DELETE', `/resource_providers/${rp}/inventories/VCPU`);
    expect(one.status).toBe(409);
    expect(one.json.errors[0].code).toBe('placement.concurrent_update');
  });

  it('moves atomically with POST /allocations: the migration holds the source, the instance the destination', async () => {
    const body = {
      [vm]: { ...claim({ VCPU: 2 }, 1, dest) },
      [migration]: { ...claim({ VCPU: 4, MEMORY_MB: 1024 }, null), consumer_type: 'MIGRATION' },
    };
    expect((await p.call('POST', '/allocations', body)).status).toBe(204);
    expect((await p.call('GET', `/allocations/${vm}`)).json.allocations).toEqual({ [dest]: { generation: 2, resources: { VCPU: 2 } } });
    expect(Object.keys((await p.call('GET', `/resource_providers/${rp}/allocations`)).json.allocations)).toEqual([migration]);
  });

  it('sums usages per project, grouped by consumer type from 1.38, with PostgreSQL-valid queries', async () => {
    const old = await p.call('GET', `/usages?project_id=${project}`, undefined, { version: '1.37' });
    expect(old.json.usages).toEqual({ VCPU: 6, MEMORY_MB: 1024 });
    const byType = await p.call('GET', `/usages?project_id=${project}`);
    expect(byType.json.usages).toEqual({
      INSTANCE: { VCPU: 2, consumer_count: 1 },
      MIGRATION: { VCPU: 4, MEMORY_MB: 1024, consumer_count: 1 },
    });
    const all = await p.call('GET', `/usages?project_id=${project}&consumer_type=all`);
    expect(all.json.usages).toEqual({ all: { VCPU: 6, MEMORY_MB: 1024, consumer_count: 2 } });
  });

  it('releases: DELETE /allocations frees the capacity, a second DELETE is 404', async () => {
    expect((await p.call('DELETE', `/allocations/${migration}`)).status).toBe(204);
    expect((await p.call('DELETE', `/allocations/${migration}`)).status).toBe(404);
    expect((await p.call('GET', `/resource_providers/${rp}/usages`)).json.usages).toEqual({ VCPU: 0, MEMORY_MB: 0 });
  });
});
