import { randomUUID } from 'node:crypto';
import { startPlacement, type PlacementHarness } from './api-helpers';

// An ordered story, like Placement's gabbits: each step depends on the previous ones.
describe('placement resource providers', () => {
  let p: PlacementHarness;
  const root = randomUUID();
  const child = randomUUID();
  const other = randomUUID();
  beforeAll(async () => {
    p = await startPlacement('placement_rp');
  });
  afterAll(async () => {
    await p.close();
  });

  it('refuses without a token (401) and for a non-admin (403), serves / to anyone', async () => {
    expect((await p.call('GET', '/resource_providers', undefined, { token: null })).status).toBe(401);
    const denied = await p.call('GET', '/resource_providers', undefined, { token: 'alice:proj' });
    expect(denied.status).toBe(403);
    const home = await p.call('GET', '/', undefined, { token: null });
    expect(home.json.versions[0]).toMatchObject({ min_version: '1.0', max_version: '1.39', status: 'CURRENT' });
    expect(home.headers['openstack-api-version']).toBe('placement 1.39');
  });

  it('answers 406 with min/max for an unsupported microversion and 400 for a malformed one', async () => {
    const r = await p.call('GET', '/', undefined, { version: '1.99' });
    expect(r.status).toBe(406);
    expect(r.json.errors[0]).toMatchObject({ min_version: '1.0', max_version: '1.39' });
    expect((await p.call('GET', '/', undefined, { version: 'x.y' })).status).toBe(400);
  });

  it('creates a root provider (200 + body from 1.20) and a child under it', async () => {
    const r = await p.call('POST', '/resource_providers', { name: 'cn1', uuid: root });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ uuid: root, generation: 0, root_provider_uuid: root, parent_provider_uuid: null });
    const c = await p.call('POST', '/resource_providers', { name: 'cn1_numa0', uuid: child, parent_provider_uuid: root });
    expect(c.json).toMatchObject({ root_provider_uuid: root, parent_provider_uuid: root });
    expect((await p.call('POST', '/resource_providers', { name: 'other', uuid: other }, { version: '1.19' })).status).toBe(201);
  });

  it('rejects a duplicate name with placement.duplicate_name and a bad body with the schema message', async () => {
    const dup = await p.call('POST', '/resource_providers', { name: 'cn1' });
    expect(dup.status).toBe(409);
    expect(dup.json.errors[0].code).toBe('placement.duplicate_name');
    const bad = await p.call('POST', '/resource_providers', { name: 'x', color: 'blue' });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].detail).toContain("Additional properties are not allowed ('color' was unexpected)");
  });

  it('filters by in_tree, name and uuid', async () => {
    const tree = await p.call('GET', `/resource_providers?in_tree=${child}`);
    expect(tree.json.resource_providers.map((r: { uuid: string }) => r.uuid).sort()).toEqual([root, child].sort());
    expect((await p.call('GET', '/resource_providers?name=other')).json.resource_providers).toHaveLength(1);
    const bad = await p.call('GET', '/resource_providers?in_tree=nope');
    expect(bad.status).toBe(400);
  });

  it('refuses re-parenting before 1.37 and allows it at 1.37, moving the subtree root', async () => {
    const before = await p.call(
      'PUT',
      `/resource_providers/${child}`,
      { name: 'cn1_numa0', parent_provider_uuid: other },
      { version: '1.36' },
    );
    expect(before.status).toBe(400);
    expect(before.json.errors[0].detail).toContain('re-parenting a provider is not currently allowed');
    const after = await p.call(
      'PUT',
      `/resource_providers/${child}`,
      { name: 'cn1_numa0', parent_provider_uuid: other },
      { version: '1.37' },
    );
    expect(after.json).toMatchObject({ parent_provider_uuid: other, root_provider_uuid: other });
    const loop = await p.call('PUT', `/resource_providers/${other}`, { name: 'other', parent_provider_uuid: child }, { version: '1.37' });
    expect(loop.json.errors[0].detail).toContain('creating loop in the provider tree is not allowed');
  });

  it('will not delete a parent (409 cannot_delete_parent), deletes a leaf, then 404s', async () => {
    const parent = await p.call('DELETE', `/resource_providers/${other}`);
    expect(parent.status).toBe(409);
    expect(parent.json.errors[0].code).toBe('placement.resource_provider.cannot_delete_parent');
    expect((await p.call('DELETE', `/resource_providers/${child}`)).status).toBe(204);
    expect((await p.call('GET', `/resource_providers/${child}`)).status).toBe(404);
  });

  it('answers 405 with Allow for an unsupported method', async () => {
    const r = await p.call('DELETE', '/resource_providers');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, POST');
  });
});
