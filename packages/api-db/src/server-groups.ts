import { randomUUID } from 'node:crypto';
import { ApiDbError, checkUuid, checkUuids, type Queryable } from './db';

/** The four server-group policies (os-server-groups). */
export type ServerGroupPolicy = 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';
export const SERVER_GROUP_POLICIES: readonly ServerGroupPolicy[] = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'];

/** Nova's InstanceGroup (a server group) with its policy, rules and members. */
export interface InstanceGroup {
  readonly uuid: string;
  readonly name: string;
  readonly userId: string;
  readonly projectId: string;
  readonly policy: ServerGroupPolicy;
  /** e.g. `{ max_server_per_host: 2 }` (anti-affinity only, as Nova 2.64). */
  readonly rules: Readonly<Record<string, number>>;
  /** Member instance uuids in the order they joined. */
  readonly members: readonly string[];
  readonly createdAt: Date;
}

interface Row {
  uuid: string;
  name: string;
  user_id: string;
  project_id: string;
  policy: ServerGroupPolicy;
  rules: Record<string, number>;
  members: string[];
  created_at: Date;
}
const toGroup = (r: Row): InstanceGroup => ({
  uuid: r.uuid,
  name: r.name,
  userId: r.user_id,
  projectId: r.project_id,
  policy: r.policy,
  rules: r.rules,
  members: r.members,
  createdAt: r.created_at,
});
const SELECT = `SELECT g.uuid, g.name, g.user_id, g.project_id, p.policy, p.rules, g.created_at,
  coalesce((SELECT array_agg(m.instance_uuid::text ORDER BY m.id) FROM instance_group_member m WHERE m.group_id = g.id), '{}') AS members
  FROM instance_groups g JOIN instance_group_policy p ON p.group_id = g.id`;

export interface NewInstanceGroup {
  uuid?: string;
  name: string;
  userId: string;
  projectId: string;
  policy: ServerGroupPolicy;
  rules?: Readonly<Record<string, number>>;
  members?: readonly string[];
}

function validate(g: NewInstanceGroup): void {
  const problems: string[] = [];
  if (g.name.trim() === '' || g.name.length > 255) problems.push('name must be 1-255 characters');
  if (!SERVER_GROUP_POLICIES.includes(g.policy)) problems.push(`policy must be one of ${SERVER_GROUP_POLICIES.join(', ')}`);
  for (const [key, value] of Object.entries(g.rules ?? {})) {
    if (key !== 'max_server_per_host') problems.push(`unknown rule ${key}`);
    else if (g.policy !== 'anti-affinity') problems.push('max_server_per_host is only valid with the anti-affinity policy');
    else if (!Number.isSafeInteger(value) || value < 1) problems.push('max_server_per_host must be an integer >= 1');
  }
  if (problems.length > 0) throw new ApiDbError('api_db.instance_group.invalid', `invalid server group: ${problems.join('; ')}`);
}

/**
 * Creates a server group with its policy and initial members in one statement.
 * Idempotent per uuid: if the uuid exists nothing changes and `created` is false.
 * Bad input throws `api_db.instance_group.invalid`.
 */
export async function createInstanceGroup(db: Queryable, g: NewInstanceGroup): Promise<{ group: InstanceGroup; created: boolean }> {
  validate(g);
  const uuid = checkUuid(g.uuid ?? randomUUID(), 'server group uuid');
  const r = await db.query(
    `WITH g AS (INSERT INTO instance_groups (uuid, name, user_id, project_id) VALUES ($1, $2, $3, $4) ON CONFLICT (uuid) DO NOTHING RETURNING id),
     p AS (INSERT INTO instance_group_policy (group_id, policy, rules) SELECT id, $5, $6 FROM g),
     m AS (INSERT INTO instance_group_member (group_id, instance_uuid) SELECT g.id, u FROM g, unnest($7::uuid[]) AS u ON CONFLICT DO NOTHING)
     SELECT id FROM g`,
    [uuid, g.name, g.userId, g.projectId, g.policy, JSON.stringify(g.rules ?? {}), checkUuids(g.members ?? [], 'member uuid')],
  );
  const group = await getInstanceGroup(db, uuid);
  if (group === undefined) throw new ApiDbError('api_db.instance_group.race', `server group ${uuid} vanished during create`);
  return { group, created: r.rows.length > 0 };
}

/** The group with members, or undefined (Nova's InstanceGroupNotFound). Read-only. */
export async function getInstanceGroup(db: Queryable, uuid: string): Promise<InstanceGroup | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE g.uuid = $1`, [checkUuid(uuid, 'server group uuid')]);
  return r.rows[0] === undefined ? undefined : toGroup(r.rows[0]);
}

/** The group an instance belongs to, or undefined. Read-only. */
export async function getInstanceGroupByInstance(db: Queryable, instanceUuid: string): Promise<InstanceGroup | undefined> {
  const r = await db.query<Row>(
    `${SELECT} WHERE g.id = (SELECT group_id FROM instance_group_member WHERE instance_uuid = $1 ORDER BY id LIMIT 1)`,
    [checkUuid(instanceUuid, 'instance uuid')],
  );
  return r.rows[0] === undefined ? undefined : toGroup(r.rows[0]);
}

/** Groups of a project (or all), oldest first. Read-only. */
export async function listInstanceGroups(db: Queryable, opts: { projectId?: string } = {}): Promise<InstanceGroup[]> {
  const r = await db.query<Row>(`${SELECT} WHERE ($1::text IS NULL OR g.project_id = $1) ORDER BY g.id`, [opts.projectId ?? null]);
  return r.rows.map(toGroup);
}

/**
 * Adds members (Nova's InstanceGroup.add_members). Idempotent: members already in the
 * group are skipped. Returns the uuids newly added, or undefined if the group does not exist.
 */
export async function addInstanceGroupMembers(
  db: Queryable,
  groupUuid: string,
  instanceUuids: readonly string[],
): Promise<string[] | undefined> {
  const r = await db.query<{ group_id: number; added: string[] }>(
    `WITH g AS (SELECT id FROM instance_groups WHERE uuid = $1),
     m AS (INSERT INTO instance_group_member (group_id, instance_uuid) SELECT g.id, u FROM g, unnest($2::uuid[]) AS u
       ON CONFLICT DO NOTHING RETURNING instance_uuid)
     SELECT g.id AS group_id, coalesce((SELECT array_agg(instance_uuid::text) FROM m), '{}') AS added FROM g`,
    [checkUuid(groupUuid, 'server group uuid'), checkUuids(instanceUuids, 'member uuid')],
  );
  return r.rows[0]?.added;
}

/** Removes an instance from every group (on delete). Idempotent: returns how many memberships were removed. */
export async function removeInstanceGroupMember(db: Queryable, instanceUuid: string): Promise<number> {
  const r = await db.query('DELETE FROM instance_group_member WHERE instance_uuid = $1', [checkUuid(instanceUuid, 'instance uuid')]);
  return r.rowCount ?? 0;
}

/** Deletes a group, its policy and memberships. Idempotent: returns whether it existed. */
export async function deleteInstanceGroup(db: Queryable, uuid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM instance_groups WHERE uuid = $1', [checkUuid(uuid, 'server group uuid')]);
  return (r.rowCount ?? 0) > 0;
}
