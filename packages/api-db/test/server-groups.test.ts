import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@cellsched/db';
import {
  addInstanceGroupMembers,
  API_DB_MIGRATIONS_DIR,
  createInstanceGroup,
  deleteInstanceGroup,
  getInstanceGroup,
  getInstanceGroupByInstance,
  listInstanceGroups,
  removeInstanceGroupMember,
} from '@cellsched/api-db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'apidb_sg', kind: 'api', migrationsDir: API_DB_MIGRATIONS_DIR });
});
afterAll(async () => {
  await db.drop();
});

describe('server groups (instance_groups)', () => {
  it('create with policy, rules and members; idempotent per uuid', async () => {
    const uuid = randomUUID();
    const m1 = randomUUID();
    const { group, created } = await createInstanceGroup(db.pool, {
      uuid,
      name: 'g',
      userId: 'u',
      projectId: 'p',
      policy: 'anti-affinity',
      rules: { max_server_per_host: 2 },
      members: [m1],
    });
    expect(created).toBe(true);
    expect(group).toMatchObject({ uuid, name: 'g', policy: 'anti-affinity', rules: { max_server_per_host: 2 }, members: [m1] });
    const again = await createInstanceGroup(db.pool, { uuid, name: 'other', userId: 'u', projectId: 'p', policy: 'affinity' });
    expect(again).toEqual({ group, created: false });
  });

  it('members are added once, in order; removal and lookup by instance', async () => {
    const { group } = await createInstanceGroup(db.pool, { name: 'aff', userId: 'u', projectId: 'p2', policy: 'soft-affinity' });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await addInstanceGroupMembers(db.pool, group.uuid, [a, b])).toEqual(expect.arrayContaining([a, b]));
    expect(await addInstanceGroupMembers(db.pool, group.uuid, [b, c])).toEqual([c]);
    expect(await addInstanceGroupMembers(db.pool, randomUUID(), [a])).toBeUndefined();
    expect((await getInstanceGroup(db.pool, group.uuid))?.members).toEqual([a, b, c]);
    expect((await getInstanceGroupByInstance(db.pool, b))?.uuid).toBe(group.uuid);
    expect(await removeInstanceGroupMember(db.pool, b)).toBe(1);
    expect(await removeInstanceGroupMember(db.pool, b)).toBe(0);
    expect(await getInstanceGroupByInstance(db.pool, b)).toBeUndefined();
    expect((await listInstanceGroups(db.pool, { projectId: 'p2' })).map((g) => g.uuid)).toEqual([group.uuid]);
    expect(await deleteInstanceGroup(db.pool, group.uuid)).toBe(true);
    expect(await deleteInstanceGroup(db.pool, group.uuid)).toBe(false);
    expect(await getInstanceGroupByInstance(db.pool, a)).toBeUndefined();
  });

  it('refuses bad policies and rules, writing nothing', async () => {
    const before = (await listInstanceGroups(db.pool)).length;
    await expect(createInstanceGroup(db.pool, { name: 'x', userId: 'u', projectId: 'p', policy: 'spread' as never })).rejects.toMatchObject(
      { code: 'api_db.instance_group.invalid' },
    );
    await expect(
      createInstanceGroup(db.pool, { name: 'x', userId: 'u', projectId: 'p', policy: 'affinity', rules: { max_server_per_host: 2 } }),
    ).rejects.toThrow('max_server_per_host is only valid with the anti-affinity policy');
    await expect(
      createInstanceGroup(db.pool, { name: 'x', userId: 'u', projectId: 'p', policy: 'anti-affinity', rules: { max_server_per_host: 0 } }),
    ).rejects.toThrow('max_server_per_host must be an integer >= 1');
    await expect(
      createInstanceGroup(db.pool, { name: 'x', userId: 'u', projectId: 'p', policy: 'affinity', members: ['bad'] }),
    ).rejects.toMatchObject({ code: 'api_db.invalid_uuid' });
    expect((await listInstanceGroups(db.pool)).length).toBe(before);
  });
});
