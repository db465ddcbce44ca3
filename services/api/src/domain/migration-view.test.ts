import type { MigrationRecord } from '@cellsched/cell-db';
import type { Caller } from './auth';
import { migrationsLinks, migrationView, parseMigrationQuery, serverMigrationView } from './migration-view';

const admin: Caller = { userId: 'admin', projectId: 'admin', isAdmin: true };
const ctx = (minor: number): { caller: Caller; version: { major: number; minor: number }; baseUrl: string } => ({
  caller: admin,
  version: { major: 2, minor },
  baseUrl: 'http://api',
});
const M: MigrationRecord = {
  id: 7,
  uuid: '12341234-1234-1234-1234-123412341234',
  instanceUuid: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
  sourceCompute: 'h1',
  destCompute: 'h2',
  sourceNode: 'h1',
  destNode: 'h2',
  destHost: null,
  migrationType: 'live-migration',
  status: 'running',
  userId: 'u',
  projectId: 'p',
  oldInstanceTypeId: null,
  newInstanceTypeId: null,
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
  updatedAt: new Date('2026-01-02T03:04:06Z'),
};
const err = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return `${(e as { status: number }).status} ${(e as Error).message}`;
  }
};

describe('migrationView', () => {
  it('2.1: the base fields only, Nova times', () => {
    expect(migrationView({ migration: M }, ctx(1))).toEqual({
      created_at: '2026-01-02T03:04:05.678000',
      dest_compute: 'h2',
      dest_host: null,
      dest_node: 'h2',
      id: 7,
      instance_uuid: M.instanceUuid,
      new_instance_type_id: null,
      old_instance_type_id: null,
      source_compute: 'h1',
      source_node: 'h1',
      status: 'running',
      updated_at: '2026-01-02T03:04:06.000000',
    });
  });

  it("shows the flavors' integer ids the migration recorded (Nova's old/new_instance_type_id)", () => {
    expect(
      migrationView({ migration: { ...M, migrationType: 'resize', oldInstanceTypeId: 3, newInstanceTypeId: 5 } }, ctx(1)),
    ).toMatchObject({ old_instance_type_id: 3, new_instance_type_id: 5 });
    expect(migrationView({ migration: { ...M, oldInstanceTypeId: 4, newInstanceTypeId: 4 } }, ctx(60))).toMatchObject({
      old_instance_type_id: 4,
      new_instance_type_id: 4,
    });
  });

  it('2.23 adds migration_type and links for an in-progress live migration; 2.59 uuid; 2.80 user/project', () => {
    expect(migrationView({ migration: M }, ctx(23))).toMatchObject({
      migration_type: 'live-migration',
      links: [
        { rel: 'self', href: `http://api/v2.1/servers/${M.instanceUuid}/migrations/7` },
        { rel: 'bookmark', href: `http://api/servers/${M.instanceUuid}/migrations/7` },
      ],
    });
    expect(migrationView({ migration: { ...M, status: 'completed' } }, ctx(23)).links).toBeUndefined();
    expect(migrationView({ migration: { ...M, migrationType: 'resize' } }, ctx(23)).links).toBeUndefined();
    expect(migrationView({ migration: M }, ctx(58)).uuid).toBeUndefined();
    expect(migrationView({ migration: M }, ctx(59)).uuid).toBe(M.uuid);
    expect(migrationView({ migration: M }, ctx(80))).toMatchObject({ user_id: 'u', project_id: 'p' });
  });

  it('server migration view: Nova server_migrations output', () => {
    expect(serverMigrationView(M, ctx(23))).toMatchObject({
      server_uuid: M.instanceUuid,
      memory_total_bytes: null,
      status: 'running',
      id: 7,
    });
    expect(serverMigrationView(M, ctx(23)).uuid).toBeUndefined();
    expect(serverMigrationView(M, ctx(59)).uuid).toBe(M.uuid);
  });
});

describe('parseMigrationQuery', () => {
  it('before 2.59: filters only, unknown keys ignored, no paging', () => {
    expect(parseMigrationQuery({ host: 'h1', status: ['a', 'b'], limit: '1', foo: 'x' }, ctx(23), 1000)).toEqual({
      status: 'b',
      host: 'h1',
      sourceCompute: undefined,
      migrationType: undefined,
      instanceUuid: undefined,
      hiddenOnly: false,
    });
  });

  it('from 2.59: limit (capped), marker, changes-since; unknown keys are a 400', () => {
    expect(parseMigrationQuery({ limit: '5000', marker: 'm', 'changes-since': '2026-01-01T00:00:00' }, ctx(59), 1000)).toMatchObject({
      limit: 1000,
      marker: 'm',
      changesSince: new Date('2026-01-01T00:00:00Z'),
    });
    expect(parseMigrationQuery({}, ctx(59), 1000).limit).toBe(1000);
    expect(err(() => parseMigrationQuery({ foo: 'x' }, ctx(59), 1000))).toBe(
      "400 Additional properties are not allowed ('foo' was unexpected)",
    );
    expect(err(() => parseMigrationQuery({ limit: '-1' }, ctx(59), 1000))).toMatch(/^400 Invalid input for query parameters limit/);
    expect(err(() => parseMigrationQuery({ 'changes-since': 'yesterday' }, ctx(59), 1000))).toMatch(/is not a 'date-time'$/);
    expect(err(() => parseMigrationQuery({ limit: ['1', '2'] }, ctx(59), 1000))).toMatch(/^400/);
    expect(err(() => parseMigrationQuery({ user_id: 'u' }, ctx(64), 1000))).toMatch(/'user_id' was unexpected/);
  });

  it('changes-before from 2.66 (an unknown key before), not earlier than changes-since', () => {
    expect(err(() => parseMigrationQuery({ 'changes-before': '2026-01-01T00:00:00Z' }, ctx(65), 1000))).toBe(
      "400 Additional properties are not allowed ('changes-before' was unexpected)",
    );
    expect(parseMigrationQuery({ 'changes-before': '2026-01-01T00:00:00Z' }, ctx(66), 1000).changesBefore).toEqual(
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(
      err(() => parseMigrationQuery({ 'changes-since': '2026-02-01T00:00:00Z', 'changes-before': '2026-01-01T00:00:00Z' }, ctx(66), 1000)),
    ).toBe('400 The value of changes-since must be less than or equal to changes-before.');
    expect(err(() => parseMigrationQuery({ 'changes-before': 'soon' }, ctx(69), 1000))).toBe(
      "400 Invalid input for query parameters changes-before. Value: soon. 'soon' is not a 'date-time'",
    );
    expect(err(() => parseMigrationQuery({ limit: 'x' }, ctx(69), 1000))).toBe(
      "400 Invalid input for query parameters limit. Value: x. 'x' does not match '^[0-9]*$'",
    );
    expect(err(() => parseMigrationQuery({ limit: ['1', '2'] }, ctx(69), 1000))).toBe(
      "400 Invalid input for query parameters limit. Value: ['1', '2']. ['1', '2'] is too long",
    );
  });

  it('migrations_links: a next link only for a full page, marker = last uuid', () => {
    expect(migrationsLinks({ limit: '1', status: 'x' }, ctx(59), [{ uuid: 'u1' }], 1)).toEqual([
      { rel: 'next', href: 'http://api/v2.1/os-migrations?limit=1&status=x&marker=u1' },
    ]);
    expect(migrationsLinks({ limit: '2' }, ctx(59), [{ uuid: 'u1' }], 2)).toEqual([]);
    expect(migrationsLinks({ limit: '0' }, ctx(59), [], 0)).toEqual([]);
  });
});
