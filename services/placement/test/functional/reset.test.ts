import { randomUUID } from 'node:crypto';
import { resetPlacementData } from '../../src/adapters/sql/reset';
import { startPlacement, type PlacementHarness } from './api-helpers';

// `placement-manage db reset` (what `pnpm stack reset --only placement` runs): back to what a
// fresh install has, whatever was written through the API.
describe('placement reset', () => {
  let p: PlacementHarness;
  const rp = randomUUID();
  const consumer = randomUUID();
  let fresh: { classes: string[]; traits: number; migrations: number };
  const counts = async () => ({
    classes: (await p.call('GET', '/resource_classes')).json.resource_classes.map((c: { name: string }) => c.name).sort(),
    traits: (await p.call('GET', '/traits')).json.traits.length,
    migrations: Number((await p.db.pool.query('SELECT count(*) AS n FROM schema_migrations')).rows[0].n),
  });
  beforeAll(async () => {
    p = await startPlacement('placement_reset');
    fresh = await counts();
  });
  afterAll(async () => {
    await p.close();
  });

  it('deletes providers, allocations, consumers, aggregates and custom classes and traits; keeps the standard ones', async () => {
    expect((await p.call('PUT', '/resource_classes/CUSTOM_GOLD')).status).toBe(201);
    expect((await p.call('PUT', '/traits/CUSTOM_FAST')).status).toBe(201);
    expect((await p.call('POST', '/resource_providers', { name: 'cn-reset', uuid: rp })).status).toBe(200);
    expect(
      (
        await p.call('PUT', `/resource_providers/${rp}/inventories`, {
          resource_provider_generation: 0,
          inventories: { VCPU: { total: 8 }, CUSTOM_GOLD: { total: 2 } },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await p.call('PUT', `/resource_providers/${rp}/traits`, {
          resource_provider_generation: 1,
          traits: ['CUSTOM_FAST', 'HW_CPU_X86_AVX2'],
        })
      ).status,
    ).toBe(200);
    expect(
      (await p.call('PUT', `/resource_providers/${rp}/aggregates`, { resource_provider_generation: 2, aggregates: [randomUUID()] })).status,
    ).toBe(200);
    const alloc = {
      allocations: { [rp]: { resources: { VCPU: 2, CUSTOM_GOLD: 1 } } },
      project_id: randomUUID(),
      user_id: randomUUID(),
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    expect((await p.call('PUT', `/allocations/${consumer}`, alloc)).status).toBe(204);

    await resetPlacementData(p.db.pool);

    expect((await p.call('GET', '/resource_providers')).json.resource_providers).toEqual([]);
    expect((await p.call('GET', `/allocations/${consumer}`)).json.allocations).toEqual({});
    expect((await p.call('GET', '/resource_classes/CUSTOM_GOLD')).status).toBe(404);
    expect((await p.call('GET', '/traits/CUSTOM_FAST')).status).toBe(404);
    expect((await p.call('GET', '/traits/HW_CPU_X86_AVX2')).status).toBe(204);
    for (const t of ['consumers', 'projects', 'users', 'consumer_types', 'placement_aggregates']) {
      expect((await p.db.pool.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n).toBe('0');
    }
    expect(await counts()).toEqual(fresh);
  });

  it('is idempotent, and the database takes the same writes again (ids restart)', async () => {
    await resetPlacementData(p.db.pool);
    expect((await p.call('POST', '/resource_providers', { name: 'cn-reset', uuid: rp })).status).toBe(200);
    expect((await p.db.pool.query('SELECT id FROM resource_providers')).rows).toEqual([{ id: 1 }]);
  });
});
