import { randomUUID } from 'node:crypto';
import { startPlacement, type PlacementHarness } from './api-helpers';

// The property the scheduler's "claim while selecting" design rests on.
describe('placement concurrent claims', () => {
  let p: PlacementHarness;
  const rp = randomUUID();
  beforeAll(async () => {
    p = await startPlacement('placement_race', 20);
    await p.call('POST', '/resource_providers', { name: 'small-host', uuid: rp });
    // fits exactly 10 claims of 2 VCPU: (24 - 4) * 1.0 = 20
    await p.call('PUT', `/resource_providers/${rp}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 24, reserved: 4 } },
    });
  });
  afterAll(async () => {
    await p.close();
  });

  it('50 concurrent claimers on a provider that fits 10: exactly 10 succeed, 40 get clean 409s', async () => {
    const attempts = Array.from({ length: 50 }, () =>
      p.call(
        'PUT',
        `/allocations/${randomUUID()}`,
        {
          allocations: { [rp]: { resources: { VCPU: 2 } } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
        },
        { version: '1.28' },
      ),
    );
    const results = await Promise.all(attempts);
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 204)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(40);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(r.json.errors[0].detail).toContain(`Unable to create allocation for 'VCPU' on resource provider '${rp}'`);
    }
    const usages = await p.call('GET', `/resource_providers/${rp}/usages`);
    expect(usages.json.usages.VCPU).toBe(20);
    const allocs = await p.call('GET', `/resource_providers/${rp}/allocations`);
    expect(Object.keys(allocs.json.allocations)).toHaveLength(10);
    // every successful claim bumped the generation exactly once (1 for the inventory)
    expect(allocs.json.resource_provider_generation).toBe(11);
  });

  it('never exceeds capacity when claims and releases interleave', async () => {
    const holders = Object.keys((await p.call('GET', `/resource_providers/${rp}/allocations`)).json.allocations);
    const ops = [
      ...holders.slice(0, 5).map((c) => p.call('DELETE', `/allocations/${c}`)),
      ...Array.from({ length: 20 }, () =>
        p.call(
          'PUT',
          `/allocations/${randomUUID()}`,
          {
            allocations: { [rp]: { resources: { VCPU: 2 } } },
            project_id: 'p',
            user_id: 'u',
            consumer_generation: null,
          },
          { version: '1.28' },
        ),
      ),
    ];
    await Promise.all(ops);
    const usages = await p.call('GET', `/resource_providers/${rp}/usages`);
    expect(usages.json.usages.VCPU).toBeLessThanOrEqual(20);
    const allocs = await p.call('GET', `/resource_providers/${rp}/allocations`);
    const total = Object.values(allocs.json.allocations as Record<string, { resources: { VCPU: number } }>).reduce(
      (s, a) => s + a.resources.VCPU,
      0,
    );
    expect(total).toBe(usages.json.usages.VCPU);
  });

  it('20 concurrent writes creating the same consumer: it ends with one allocation, the losers get concurrent_update', async () => {
    const roomy = randomUUID();
    await p.call('POST', '/resource_providers', { name: 'roomy-host', uuid: roomy });
    await p.call('PUT', `/resource_providers/${roomy}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 100 } },
    });
    const consumer = randomUUID();
    // NOTE: before 1.28 a write replaces whatever the consumer holds (no generation check), as the scheduler's replace-claims.
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        p.call(
          'PUT',
          `/allocations/${consumer}`,
          {
            allocations: { [roomy]: { resources: { VCPU: 3 } } },
            project_id: `proj-${consumer}`,
            user_id: `user-${consumer}`,
          },
          { version: '1.23' },
        ),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s !== 204 && s !== 409)).toEqual([]);
    expect(statuses).toContain(204);
    for (const r of results.filter((x) => x.status === 409)) expect(r.json.errors[0].code).toBe('placement.concurrent_update');
    const usages = await p.call('GET', `/resource_providers/${roomy}/usages`);
    expect(usages.json.usages.VCPU).toBe(3);
    const held = await p.call('GET', `/allocations/${consumer}`, undefined, { version: '1.12' });
    expect(held.json).toMatchObject({
      allocations: { [roomy]: { resources: { VCPU: 3 } } },
      project_id: `proj-${consumer}`,
      user_id: `user-${consumer}`,
    });
  });
});
